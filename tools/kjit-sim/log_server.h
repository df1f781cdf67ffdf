/* SPDX-License-Identifier: GPL-2.0 */
// Serves a capture's replay log (replay_log.h) to one run on the emulated
// CPU: before each instruction, the logged reads it made are written where
// it reads them, a non-deterministic instruction is skipped and its logged
// results set, a call into the scheduler is played from its RESUME record,
// and the block sequence is followed (docs/capture-format.md says what
// each record means).  Used by the replay (replay.h) and by the gdb server
// (replay_cursor.h), which saves and restores its position in the log.
#ifndef KJIT_SIM_LOG_SERVER_H
#define KJIT_SIM_LOG_SERVER_H

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "arch/x86/decoder.h"
#include "capture_file.h"
#include "emulator.h"
#include "replay_log.h"

namespace kjit::sim {

// How far one run has consumed the log.
struct ServeState {
  size_t reads = 0, nondets = 0, blocks = 0, resumes = 0;  // consumed
  std::string error;                          // first serving problem
};

// Where a logged read goes in the replay: GS/FS-relative reads at the
// capture's base (the task may have migrated while the kernel ran it).
uint64_t read_address(const LoggedRead &r, const Capture &cap);

// The instruction at `pc`, decoded by the engine's decoder from the
// capture's code.
bool decode_captured(const Capture &cap, uint64_t pc, x86::Insn *in);

// Where a logged block's translation shows in the code cache: the pc of
// its first copied instruction (the engine copies no NOP), 0 when it has
// none (only a transfer, after NOPs or not).
uint64_t first_copied_pc(const Capture &cap, const LoggedBlock &blk);

// The functions the kernel called outside the code cache, other than the
// scheduler funnel: the RESUME records' other targets.
std::vector<uint64_t> native_calls(const ReplayLog &log, const SymbolTable *syms);

// Serves the log to one run.  `to_orig` maps an executing pc to the
// original instruction's pc (0: not program code).
class LogServer {
 public:
  // `translated`: pcs are code-cache pcs; a block start only counts at the
  // copy of the original instruction (exit stubs map to the next original
  // pc too).
  LogServer(const Capture &cap, const ReplayLog &log, std::function<uint64_t(uint64_t)> to_orig, bool translated)
      : cap_(cap), log_(log), to_orig_(std::move(to_orig)), translated_(translated) {}

  // The scheduler funnel (0: unknown), to name a sleep the log lacks.
  void set_funnel(uint64_t funnel) { funnel_ = funnel; }
  // Told the funnel's address when the original run skips a call into it.
  void on_sleep(std::function<void(uint64_t target)> fn) { on_sleep_ = std::move(fn); }

  // The translated run's scheduler gate, [rsp] = the return address: the
  // next RESUME record's registers; returns where to continue, or 0 after
  // failing the run.
  uint64_t resume_at_gate(Emulator &emu);

  void attach(Emulator &emu);
  const ServeState &state() const { return st_; }
  // Serves the log from its start again (a second run of the same code).
  void restart();

  // Where a run is in the log, between two instructions: what save()
  // returns is all restore() needs to serve the rest of the log again
  // from there (the memory and registers are the caller's to restore).
  struct Position {
    ServeState st;
    uint64_t last_orig = 0, last_block = 0;
    bool flags_pending = false;
    uint64_t flags_pc = 0, flags_value = 0;
  };
  Position save() const;
  void restore(const Position &p);
  // The arithmetic flags a flags-only NONDET record gives the instruction
  // that just ran, which the server sets before the next one: the flags
  // the kernel had at this point.  False when none is pending.
  bool pending_flags(uint64_t *arith_flags) const;

 private:
  void problem(Emulator &emu, uint64_t pc, const std::string &why);
  bool place_read(Emulator &emu, uint64_t at, const std::vector<uint8_t> &bytes);
  bool is_nondet(const Emulator &emu, uint64_t pc);
  void on_insn(Emulator &emu, uint64_t pc, uint32_t size);
  bool sleep_at(Emulator &emu, uint64_t orig, uint64_t pc, uint32_t size);
  bool take_resume(Emulator &emu, uint64_t ret, uint64_t sp);
  bool is_copy(const Emulator &emu, uint64_t pc, uint64_t orig) const;

  const Capture &cap_;
  const ReplayLog &log_;
  std::function<uint64_t(uint64_t)> to_orig_;
  bool translated_;
  uint64_t funnel_ = 0;
  std::function<void(uint64_t)> on_sleep_;
  uint64_t last_orig_ = 0, last_block_ = 0;
  // CF, PF, AF, ZF, SF, OF: what a flags-only NONDET record sets.
  static constexpr uint64_t kArithFlags = 0x8d5;
  bool flags_pending_ = false;
  uint64_t flags_pc_ = 0, flags_value_ = 0;
  std::unordered_map<uint64_t, bool> nondet_at_;
  ServeState st_;
};

}  // namespace kjit::sim
#endif
