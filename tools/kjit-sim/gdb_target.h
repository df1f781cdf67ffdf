/* SPDX-License-Identifier: GPL-2.0 */
// What the gdb stub (gdb_stub.h) asks of the program it debugs: registers
// in the order of its target description, memory, stepping and
// continuing either way, breakpoints and watchpoints, monitor commands.
// The replay of a capture is one (gdb_replay_target.h); the stub's tests
// use a fake.  A virtual interface: the stub knows nothing of x86 or of
// the emulator.
#ifndef KJIT_SIM_GDB_TARGET_H
#define KJIT_SIM_GDB_TARGET_H

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kjit::sim::gdb {

constexpr int kSigInt = 2, kSigTrap = 5, kSigSegv = 11;

// Why the program stopped, as a stop reply tells gdb.
struct Stop {
  enum class Kind {
    kSignal,     // stopped with `signal`
    kExited,     // the program ended with `exit_code` (W)
    kNoHistory,  // going backward, at the beginning of the replay (replaylog:begin)
  };
  Kind kind = Kind::kSignal;
  int signal = kSigTrap;
  bool sw_breakpoint = false, hw_breakpoint = false;  // a Z0 / Z1 hit
  bool watch = false;                                 // a Z2 hit at watch_addr
  uint64_t watch_addr = 0;
  uint32_t exit_code = 0;
  // Lines for gdb's console, sent before the stop (O packets).
  std::vector<std::string> console;
  // More "name:value;" pairs for the stop reply; gdb skips names it does
  // not know.
  std::vector<std::pair<std::string, std::string>> extra;
};

struct RegisterValue {
  uint8_t bytes[16] = {};  // target byte order
  uint32_t size = 8;
  bool available = true;   // false: gdb shows <unavailable>
};

enum class Direction { kForward, kBackward };
// Z packet types.
enum class PointKind { kSoftware = 0, kHardware = 1, kWrite = 2, kRead = 3, kAccess = 4 };

class Target {
 public:
  virtual ~Target() = default;
  // qXfer:features:read:target.xml: the registers' names, sizes and order.
  virtual std::string target_xml() const = 0;
  virtual std::vector<RegisterValue> registers() = 0;
  // The registers a stop reply carries (pc, sp, fp), by number.
  virtual std::vector<unsigned> expedited_registers() const = 0;
  // Copies into `out` the bytes at `addr` the target knows, up to `len`,
  // and returns how many from `addr` on (0: none; gdb gets E14).
  virtual size_t read_memory(uint64_t addr, size_t len, uint8_t *out) = 0;
  // One instruction, or on until a breakpoint, a watchpoint or an end.
  // `interrupted` says whether gdb asked to stop (^C) or went away.
  virtual Stop step(Direction d, const std::function<bool()> &interrupted) = 0;
  virtual Stop resume(Direction d, const std::function<bool()> &interrupted) = 0;
  // The stop the program is at now ('?').
  virtual Stop current_stop() = 0;
  virtual bool supports(PointKind k) const = 0;
  virtual bool insert_point(PointKind k, uint64_t addr, uint64_t len) = 0;
  virtual bool remove_point(PointKind k, uint64_t addr, uint64_t len) = 0;
  // `monitor COMMAND`: the text gdb prints.
  virtual std::string monitor(const std::string &command) = 0;
  // qThreadExtraInfo: what `info threads` shows of the one thread.
  virtual std::string thread_name() const = 0;
};

}  // namespace kjit::sim::gdb
#endif
