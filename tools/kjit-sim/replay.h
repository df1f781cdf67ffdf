/* SPDX-License-Identifier: GPL-2.0 */
// Deterministic replay of a kernel capture (kjitctl capture) on the emulated
// CPU, once with the original code and once through the engine per tool.
//
// Model: the captured code blocks are mapped r-x, the task stack rw- (its
// part above rsp as copied at entry), and EVERY explicit memory read is
// served from the MEMREAD log in order: before the instruction that made it
// executes (found by its original pc), the logged bytes are written at the
// logged address, on a zero page mapped for it.  Implicit stack reads (pop,
// ret) see the stack copy plus the replayed pushes.  Writes go to those
// pages; a write to memory nobody read maps a scratch page and the run
// restarts (replay is cheap).  rdtsc & co. are skipped and their logged
// outputs set (NONDET).  A call into the scheduler funnel is a sleep: it is
// not run; the registers the task had when it continued at the return
// address are set from the next RESUME record (the original run at the
// call, a translated run at the scheduler gate).  The BLOCKS log is the kernel's block sequence: each
// run must enter the logged blocks in order, and the tools' results must
// equal what the kernel's blocks imply.
#ifndef KJIT_SIM_REPLAY_H
#define KJIT_SIM_REPLAY_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "capture_file.h"
#include "emulator.h"
#include "log_server.h"
#include "reference_runner.h"
#include "replay_log.h"
#include "sim_symbols.h"
#include "kjit/engine.h"

namespace kjit::sim {

struct ReplayOptions {
  std::vector<std::string> tools = {"icount", "bbcount", "calltrace"};
  uint64_t budget = 20'000'000;
  uint32_t max_restarts = 1024;  // scratch pages discovered by write faults
  bool quiet = true;             // engine log
  kjit_engine_options engine{};  // kjit_engine_default_options() unless set
  bool engine_set = false;
  uint64_t cache_size = 0;       // the translated runs' code cache (0: TranslatedOptions' default)
  bool profile = false;          // fill ReplayRun::insns_at
  bool trace = false;            // fill ReplayRun::trace (translated runs)
  // Translated runs: a first run builds the cache, the second, reported and
  // checked, runs from it (a warm cache).  Tools count both runs: they are
  // checked against twice the original run's counts, not the kernel's.
  bool warm = false;
  // The kernel's symbols at link-time addresses (a kallsyms list), added
  // to the capture's own, which name only the functions the log needs:
  // with them the engine tells C functions' returns (kjit_os_c_abi_return)
  // as the module does, from the function's start.  May be null.
  const SymbolTable *kallsyms = nullptr;
};

struct ReplayRun {
  std::string what;  // "original" or "translated (tool)"
  RunResult run;
  Regs final_regs;
  std::vector<MemWrite> writes;  // program writes, original pcs
  ServeState served;
  uint64_t insns = 0;
  uint64_t flushes = 0;  // translated runs: cache halves retired (a warm run's include the first run's)
  double seconds = 0;
  std::string tool_result;      // translated runs
  std::string tool_differences;  // ... Tool::differences against the original run's reference
  std::string error;            // setup error
  // With ReplayOptions::profile: instructions executed per original pc (a
  // copy counts at its original, any other cache instruction at the copy
  // executed before it; kEngineCode: engine routines outside the cache,
  // the IBL and gates, and cache code before the first copy).
  static constexpr uint64_t kEngineCode = 0;
  std::map<uint64_t, uint64_t> insns_at;
  // With ReplayOptions::trace: every instruction a translated run executed,
  // in order, with its bytes and the original pc it counts at (as above).
  struct Step {
    uint64_t pc, counted_at;
    uint8_t bytes[15];
    uint32_t size;
  };
  std::vector<Step> trace;
};

struct ToolCheck {
  std::string tool, kernel, original, translated;
  bool ok() const { return kernel == translated && original == translated; }
};

struct ReplayReport {
  bool ok = false;
  ReplayRun original;
  std::vector<ReplayRun> translated;
  ReferenceCounts reference;
  std::vector<ToolCheck> tools;
  std::vector<std::string> problems;  // why not ok
  uint32_t restarts = 0;
  size_t scratch_pages = 0;
  std::string text() const;  // human-readable report
};

// bbcount's count in the kernel for this invocation: the logged blocks whose
// last instruction ends a counted block (kjit_cf_ends_block), decoded from
// the capture's code; a block the engine cut at its size limit counts with
// its continuation.  The BLOCKS cut flag decides only where code is missing.
uint64_t kernel_blocks(const Capture &cap, const ReplayLog &log);

// Replays a capture with its log.  Returns "" (see report->ok) or an error
// that prevented replay (no log, bad capture for replay).
std::string replay_capture(const Capture &cap, const ReplayLog &log, const ReplayOptions &opt,
                           ReplayReport *report);

}  // namespace kjit::sim
#endif
