/* SPDX-License-Identifier: GPL-2.0 */
// A capture's replay that can be put at any instruction of the invocation:
// the state after `position` instructions, forward by running and backward
// by running again from a checkpoint (the replay is deterministic, so the
// same instruction count is the same state).  The gdb server
// (gdb_replay_target.h) steps, continues and reverses on it.
//
// A position counts the instructions the emulated CPU started, as gdb's
// stepi does: each iteration of a rep string instruction, a skipped
// non-deterministic instruction and a call into the scheduler played from
// its RESUME record count one.  In the translated view (the engine's code
// cache) every cache instruction counts, the engine's gates included.
#ifndef KJIT_SIM_REPLAY_CURSOR_H
#define KJIT_SIM_REPLAY_CURSOR_H

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "capture_file.h"
#include "checkpoints.h"
#include "emulator.h"
#include "replay_execution.h"
#include "replay_log.h"
#include "sim_symbols.h"

namespace kjit::sim {

class ReplayCursor {
 public:
  struct Options {
    bool translated = false;          // the engine's code cache, not the original code
    uint64_t checkpoint_every = 1000;  // instructions; original view only (0: none but the start)
    uint64_t budget = 20'000'000;     // instructions of the whole invocation
    uint32_t max_restarts = 1024;     // scratch pages found by write faults
    const SymbolTable *kallsyms = nullptr;  // link-time addresses, or null
    bool quiet = true;                // the engine's log
  };

  // Decides, before each instruction and after each write, whether a run
  // stops there (gdb's breakpoints and watchpoints).
  class Watcher {
   public:
    virtual ~Watcher() = default;
    // Before instruction `position` (at `pc`) runs: true stops there.
    virtual bool before(uint64_t position, uint64_t pc) = 0;
    // Instruction `position` made write `w`: true stops right after it.
    virtual bool wrote(uint64_t position, const MemWrite &w) = 0;
  };
  enum class Outcome {
    kReached,      // at the position asked for
    kWatched,      // the watcher stopped it
    kEnd,          // at end_position(): see ending()
    kInterrupted,  // `interrupted` said so
    kError,        // error() says why
  };

  // A byte range the invocation wrote, or that the log placed (a read
  // served, a sleep's return slot), known from `position` on.
  struct Touch {
    uint64_t position, addr, size;
  };

  ReplayCursor() = default;
  ~ReplayCursor();
  ReplayCursor(const ReplayCursor &) = delete;
  ReplayCursor &operator=(const ReplayCursor &) = delete;

  // Runs the invocation once to its end (finding the scratch pages its
  // writes need and taking the checkpoints), then goes back to its start.
  // `cap` and `log` must outlive the cursor.  "" or why it cannot.
  std::string open(const Capture &cap, const ReplayLog &log, const Options &opt);

  uint64_t position() const { return pos_; }
  uint64_t end_position() const { return end_; }
  // How the run ends at end_position(): the sentinel (the invocation
  // returned) or where and why it could not go on.
  const RunResult &ending() const { return ending_; }

  // Runs forward to `until` (at least position()), or to the end, or until
  // the watcher (may be null) stops it.  `interrupted` (may be empty) is
  // asked every 65536 instructions.
  Outcome run_to(uint64_t until, Watcher *watcher, const std::function<bool()> &interrupted);
  // Goes to `position` (up to end_position()), backward from the last
  // checkpoint at or before it.  "" or an error.
  std::string seek(uint64_t position);
  // The positions a backward search can run forward from, in order.
  std::vector<uint64_t> checkpoint_positions() const;
  const std::string &error() const { return error_; }

  Emulator &emulator() { return exec_->emulator(); }
  const LogServer &server() const { return exec_->server(); }
  uint64_t original_pc(uint64_t pc) const { return exec_->original_pc(pc); }
  bool is_engine_address(uint64_t addr) const { return exec_->is_engine_address(addr); }
  bool translated() const { return opt_.translated; }
  const SymbolTable &symbols() const { return syms_; }
  // Every range the whole invocation touched, in order (from open()).
  const std::vector<Touch> &touches() const { return touches_; }
  uint64_t checkpoint_bytes() const { return checkpoints_.bytes(); }
  // Instructions the emulator ran since open() returned, re-runs from
  // checkpoints included: what moving about has cost.
  uint64_t instructions_run() const { return executed_; }

 private:
  enum class Stop { kNone, kUntil, kWatched, kCheckpoint, kSegment };
  static constexpr uint64_t kUnknownEnd = ~uint64_t{0};
  static constexpr uint64_t kSegment = 65536;

  std::string start_execution();
  void on_insn(Emulator &emu, uint64_t pc);
  bool flush_writes();
  void note_log_touches();
  std::set<uint64_t> pages_touched_since(size_t writes, const ServeState &served);
  std::string take_checkpoint();

  const Capture *cap_ = nullptr;
  const ReplayLog *log_ = nullptr;
  Options opt_;
  Capture aug_;
  SymbolTable syms_;
  std::unique_ptr<ReplayExecution> exec_;
  Checkpoints checkpoints_;

  uint64_t pos_ = 0, end_ = kUnknownEnd, until_ = 0;
  RunResult ending_;
  bool opening_ = false;              // the first run: record touches, take checkpoints
  Watcher *watcher_ = nullptr;
  Stop stop_ = Stop::kNone;
  uint64_t last_before_ = 0;          // position the watcher last saw (before())
  bool saw_before_ = false;
  uint64_t segment_at_ = 0;           // the last interrupt check
  size_t seen_writes_ = 0;            // writes the watcher has seen
  size_t seen_reads_ = 0, seen_resumes_ = 0;  // log touches recorded
  std::vector<Touch> touches_;
  uint64_t executed_ = 0;
  std::string error_;
};

}  // namespace kjit::sim
#endif
