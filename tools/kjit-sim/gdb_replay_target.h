/* SPDX-License-Identifier: GPL-2.0 */
// The replay of a captured invocation as gdb's target (gdb_target.h), on
// a replay cursor (replay_cursor.h):
//   registers: the general-purpose ones, rip, eflags, fs_base and gs_base
//     from the emulated CPU; cs and ss are the kernel's (__KERNEL_CS 0x10,
//     __KERNEL_DS 0x18, fixed by x86-64 Linux's GDT); ds, es, fs, gs (the
//     task's user selectors), x87, SSE and orig_rax are not in a capture:
//     unavailable;
//   memory: what KnownMemory knows at the current instruction, then in
//     the translated view the engine's own memory, then the vmlinux's
//     code (when given); anything else is an error (E14);
//   Z0/Z1 breakpoints at a pc; in the translated view a breakpoint at an
//     original address also stops on the first cache instruction of its
//     copy (of the instruction after it, on a NOP or a direct jump the
//     engine does not copy), as a plain SIGTRAP there (gdb has no
//     breakpoint at that pc);
//     Z2 write watchpoints on the program's writes (in the translated
//     view, not those of the engine's own code);
//   forward: step, continue; the end of the invocation is the program's
//     exit with rax's low 32 bits as its status (gdb's $_exitcode is
//     (int) rax), the whole of rax on gdb's console;
//   backward: reverse step to the instruction before; reverse continue to
//     the last breakpoint or watched write before the current instruction,
//     found by running again from the checkpoints backward, or to the
//     start (replaylog:begin).
// A replay that cannot go on (the capture's log does not fit, a fault) is
// a SIGSEGV stop with the reason on gdb's console, at the instruction
// that could not run.
#ifndef KJIT_SIM_GDB_REPLAY_TARGET_H
#define KJIT_SIM_GDB_REPLAY_TARGET_H

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "capture_file.h"
#include "gdb_target.h"
#include "known_memory.h"
#include "replay_cursor.h"
#include "vmlinux_text.h"

namespace kjit::sim {

class GdbReplayTarget : public gdb::Target {
 public:
  // `vmlinux` and `names` (symbols at run-time addresses, for monitor's
  // output) may be null.  All must outlive the target.
  GdbReplayTarget(ReplayCursor &cursor, const Capture &cap, const VmlinuxText *vmlinux, const SymbolTable *names);

  std::string target_xml() const override;
  std::vector<gdb::RegisterValue> registers() override;
  std::vector<unsigned> expedited_registers() const override;
  size_t read_memory(uint64_t addr, size_t len, uint8_t *out) override;
  gdb::Stop step(gdb::Direction d, const std::function<bool()> &interrupted) override;
  gdb::Stop resume(gdb::Direction d, const std::function<bool()> &interrupted) override;
  gdb::Stop current_stop() override;
  bool supports(gdb::PointKind k) const override;
  bool insert_point(gdb::PointKind k, uint64_t addr, uint64_t len) override;
  bool remove_point(gdb::PointKind k, uint64_t addr, uint64_t len) override;
  std::string monitor(const std::string &command) override;
  std::string thread_name() const override;

  // The register numbers of target_xml() (gdb's amd64 order).
  enum : unsigned { kRip = 16, kEflags = 17, kCs = 18, kSs = 19, kOrigRax = 57, kFsBase = 58, kGsBase = 59,
                    kRegisterCount = 60 };

 private:
  class Points;
  gdb::Stop stopped(gdb::Stop s);
  gdb::Stop at_end();
  gdb::Stop failed(const std::string &why);
  gdb::Stop reverse_continue(const std::function<bool()> &interrupted);
  bool watched(const MemWrite &mw, uint64_t *hit) const;
  bool watched(uint64_t addr, uint64_t size, uint64_t *hit) const;
  enum class Hit { kNone, kSoftware, kHardware, kCopy };
  Hit breakpoint_at(uint64_t pc, uint64_t *last_orig) const;
  bool leads_to(uint64_t b, uint64_t orig) const;
  static void hit_into(Hit h, gdb::Stop *s);
  std::string describe(uint64_t pc) const;

  ReplayCursor &cursor_;
  const Capture &cap_;
  const VmlinuxText *vmlinux_;
  const SymbolTable *names_;
  KnownMemory known_;
  std::set<uint64_t> sw_, hw_;
  struct Watch {
    uint64_t addr, len;
  };
  std::vector<Watch> watches_;
  gdb::Stop last_;
};

}  // namespace kjit::sim
#endif
