/* SPDX-License-Identifier: GPL-2.0 */
// Runs the ORIGINAL captured code, one instruction at a time, and computes
// what the example plugins must count.  It classifies instructions with
// Capstone, never with the engine's Zydis-based decoder, so a bug in the
// engine's decoder cannot hide itself by also being in the reference.
#ifndef KJIT_SIM_REFERENCE_RUNNER_H
#define KJIT_SIM_REFERENCE_RUNNER_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capture_file.h"
#include "emulator.h"
#include "sim_symbols.h"
#include "thunks.h"

namespace kjit::sim {

struct ReferenceCounts {
  uint64_t instructions = 0;  // a rep-prefixed instruction counts once
  uint64_t blocks = 0;        // dynamic basic blocks entered
  std::map<uint64_t, uint64_t> block_starts;   // ... by start pc
  std::vector<uint64_t> call_trace;            // call targets, in order
  std::map<uint64_t, uint64_t> routine_entries;  // entry pc / call target -> count
  // Conditional branches (jcc, loop*, jrcxz) against the layout prediction
  // "forward not taken, backward taken".
  uint64_t cond_branches = 0;
  uint64_t cond_taken = 0;
  uint64_t cond_predicted = 0;  // outcome matched the layout prediction
  // Per conditional branch address: {taken, not taken}.
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> branch_outcomes;
  // lock cmpxchg executed, and how many failed (ZF = 0 afterwards).
  uint64_t lock_cmpxchg = 0;
  uint64_t lock_cmpxchg_failed = 0;
};

// The counts of `times` identical runs, one after the other (a warm
// replay's tools count the run that built the cache too).
ReferenceCounts repeated(const ReferenceCounts &c, uint32_t times);

struct ReferenceOptions {
  uint64_t budget = 10'000'000;  // instructions
  uint64_t stack_size = 64 * 1024;
  // With kernel symbols, the kernel's thunks are part of the transfers that
  // use them (see thunks.h).
  const SymbolTable *symbols = nullptr;
};

struct ReferenceResult {
  RunResult run;
  ReferenceCounts counts;
  Regs final_regs;
  std::vector<MemWrite> writes;
  std::string error;  // setup error (the run did not start), else ""
};

// Classification of one instruction, as the reference sees it.
struct InsnClass {
  uint32_t length = 0;
  bool transfer = false;     // ends a dynamic basic block
  bool conditional = false;  // jcc, loop*, jrcxz
  bool call = false;         // direct or indirect
  bool rep = false;          // rep/repe/repne prefix
  bool lock_cmpxchg = false;
  uint64_t direct_target = 0;  // 0 if not a direct branch
  std::string text;            // "mnemonic operands"
};

// Capstone-based classifier with a per-address cache (code does not change
// during a reference run).
class InsnClassifier {
 public:
  InsnClassifier();
  ~InsnClassifier();
  InsnClassifier(const InsnClassifier &) = delete;
  InsnClassifier &operator=(const InsnClassifier &) = delete;
  // False when the bytes do not decode.
  bool classify(uint64_t pc, const uint8_t *bytes, size_t len, InsnClass *out);
  // Reads up to 15 bytes at pc from the emulator and classifies them.
  bool classify(const Emulator &emu, uint64_t pc, InsnClass *out);

 private:
  size_t handle_ = 0;  // csh
  std::map<uint64_t, InsnClass> cache_;
};

// Pushes the sentinel as return address and runs capture.entry_pc to the
// sentinel in a fresh emulator.
ReferenceResult run_reference(const Capture &cap, const ReferenceOptions &opt = {});

// The same counting, attached to an emulator the caller prepared (used by
// tests and by run_reference).  The returned object accumulates counts as
// the emulator runs; call finish() after the run.
class ReferenceCounter {
 public:
  explicit ReferenceCounter(uint64_t entry_pc, const ThunkMap *thunks = nullptr);
  void attach(Emulator &emu);  // hooks every address
  void finish(Emulator &emu);  // resolves the last pending branch/cmpxchg
  const ReferenceCounts &counts() const { return counts_; }
  // The call that just ran went to `target`, though execution continues
  // elsewhere (a replay skips a call into the scheduler and resumes at its
  // return address): the call trace and routine entries name `target`.
  void call_went_to(uint64_t target) { call_target_ = target; }

 private:
  void on_insn(Emulator &emu, uint64_t pc);
  void resolve_previous(Emulator &emu, uint64_t next_pc);

  InsnClassifier classifier_;
  ReferenceCounts counts_;
  uint64_t entry_pc_;
  const ThunkMap *thunks_;
  bool first_ = true;
  bool have_prev_ = false;
  uint64_t prev_pc_ = 0;
  uint64_t call_target_ = 0;  // call_went_to, for the previous instruction
  InsnClass prev_;
};

}  // namespace kjit::sim
#endif
