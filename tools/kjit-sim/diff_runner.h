/* SPDX-License-Identifier: GPL-2.0 */
// Differential run: the original code (reference runner) against its
// translation (translated runner), from the same capture.  The translation
// is correct when the program-visible effects match: final GPRs, the
// arithmetic flags, and the ordered list of memory writes (stack included)
// outside the engine's own memory.
#ifndef KJIT_SIM_DIFF_RUNNER_H
#define KJIT_SIM_DIFF_RUNNER_H

#include <cstdint>
#include <functional>
#include <string>

#include "reference_runner.h"
#include "translated_runner.h"

namespace kjit::sim {

// CF PF AF ZF SF OF.
constexpr uint64_t kArithFlags = 0x8d5;

struct Divergence {
  enum class Kind { kNone, kOutcome, kWrite, kWriteCount, kRegister, kFlags };
  Kind kind = Kind::kNone;
  uint64_t index = 0;    // write index, or KJIT_REG_* for kRegister
  uint64_t address = 0;  // written address (kWrite)
  uint64_t original_pc = 0;    // original instruction near the divergence
  std::string original_insn;   // its disassembly
  std::string message;
};

struct DiffResult {
  bool equal = false;
  ReferenceResult reference;
  TranslatedResult translated;
  std::vector<MemWrite> program_writes;  // translated writes that were compared
  Divergence divergence;
  std::string error;  // a run could not be set up
};

struct DiffOptions {
  ReferenceOptions reference;
  TranslatedOptions translated;
  // Called while the engine is still alive after the translated run (to
  // read the plugin's results).
  std::function<void(TranslatedRunner &)> after_translated;
};

DiffResult run_diff(const Capture &cap, const DiffOptions &opt);

// A one-paragraph human-readable report of a DiffResult.
std::string describe_diff(const DiffResult &d);

// Disassembly of the captured instruction at pc ("?" if none).
std::string disassemble_capture(const Capture &cap, uint64_t pc);

}  // namespace kjit::sim
#endif
