/* SPDX-License-Identifier: GPL-2.0 */
// One replay of a capture on the emulated CPU that can stop between two
// instructions and go on later: the original code, or the engine's
// translation of it (the code cache, as kjit runs it in the kernel).  The
// log server (log_server.h) serves the capture's log to it.  The caller's
// hook runs before every other hook on each instruction, so it can count
// instructions and stop before one runs (replay_cursor.h does).
#ifndef KJIT_SIM_REPLAY_EXECUTION_H
#define KJIT_SIM_REPLAY_EXECUTION_H

#include <cstdint>
#include <memory>
#include <string>

#include "capture_file.h"
#include "emulator.h"
#include "log_server.h"
#include "replay_log.h"
#include "sim_symbols.h"

namespace kjit::sim {

class ReplayExecution {
 public:
  virtual ~ReplayExecution() = default;
  virtual Emulator &emulator() = 0;
  virtual LogServer &server() = 0;
  // Runs from where the CPU stopped (the first time: from the entry) until
  // a hook stops it, the sentinel, a fault, or `budget` more instructions.
  virtual RunResult run(uint64_t budget) = 0;
  // The original pc of an executing pc: itself in the original view; in
  // the translated view a cache pc's original, 0 for engine code.
  virtual uint64_t original_pc(uint64_t pc) const = 0;
  // Memory the engine owns in the translated view (the code cache, its
  // data window, the gates): none in the original view.
  virtual bool is_engine_address(uint64_t addr) const = 0;
};

// `aug`: the capture with the replay's pages (replay_memory.h); it, `log`
// and `syms` must outlive the execution.  Null with *err on failure.  Only
// one translated execution may exist at a time (the engine is global).
std::unique_ptr<ReplayExecution> start_original(const Capture &aug, const ReplayLog &log, const SymbolTable &syms,
                                                Emulator::CodeHook first_hook, std::string *err);
std::unique_ptr<ReplayExecution> start_translated(const Capture &aug, const ReplayLog &log, const SymbolTable &syms,
                                                  uint64_t budget, bool quiet, Emulator::CodeHook first_hook,
                                                  std::string *err);

}  // namespace kjit::sim
#endif
