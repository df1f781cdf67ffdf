// SPDX-License-Identifier: GPL-2.0
#include "replay_cursor.h"
#include "hex_text.h"

#include "replay_memory.h"

namespace kjit::sim {
ReplayCursor::~ReplayCursor() = default;

std::string ReplayCursor::open(const Capture &cap, const ReplayLog &log, const Options &opt) {
  cap_ = &cap;
  log_ = &log;
  opt_ = opt;
  if (!log.present) return "the capture has no replay log (MEMREAD/NONDET/BLOCKS/KRESULT): not a kernel capture";
  syms_ = replay_symbols(cap, log, opt.kallsyms);
  std::set<uint64_t> pages;
  std::string err = logged_read_pages(cap, log, &pages);
  if (!err.empty()) return err;
  // The first run to the end: a write to memory nobody read maps a
  // scratch page and the run starts again, as in replay.cc.
  for (uint32_t restarts = 0;; restarts++) {
    exec_.reset();
    err = augment(cap, pages, &aug_);
    if (!err.empty()) return "scratch pages: " + err;
    checkpoints_.clear();
    touches_.clear();
    end_ = kUnknownEnd;
    opening_ = true;
    err = start_execution();
    if (err.empty() && run_to(kUnknownEnd, nullptr, {}) == Outcome::kError) err = error_;
    opening_ = false;
    if (!err.empty()) return err;
    uint64_t page;
    if (!write_fault(ending_, &page) || pages.count(page) || restarts >= opt.max_restarts) break;
    pages.insert(page);
  }
  const std::string err0 = seek(0);
  executed_ = 0;
  return err0;
}

std::string ReplayCursor::start_execution() {
  exec_.reset();  // first: only one translated execution may exist
  pos_ = 0;
  seen_writes_ = seen_reads_ = seen_resumes_ = 0;
  segment_at_ = 0;
  auto hook = [this](Emulator &e, uint64_t pc, uint32_t) { on_insn(e, pc); };
  std::string err;
  exec_ = opt_.translated ? start_translated(aug_, *log_, syms_, opt_.budget, opt_.quiet, hook, &err)
                          : start_original(aug_, *log_, syms_, hook, &err);
  if (!exec_) return err;
  // To position 0: the first instruction, not run (in the translated view
  // the engine is set up and its translation of the entry is where the
  // CPU stands).
  until_ = 0;
  watcher_ = nullptr;
  stop_ = Stop::kNone;
  const RunResult r = exec_->run(opt_.budget);
  if (r.reason == StopReason::kStopped && stop_ == Stop::kUntil) return "";
  return std::string("the replay does not start: ") + stop_reason_name(r.reason) +
         (r.message.empty() ? "" : " (" + r.message + ")");
}

// The first hook of every instruction.  The writes the previous one made,
// then whether to stop before this one: at the position asked for, for a
// checkpoint or an interrupt check, or for the watcher.
void ReplayCursor::on_insn(Emulator &emu, uint64_t pc) {
  if (flush_writes()) {
    stop_ = Stop::kWatched;
    return emu.stop();
  }
  if (opening_) note_log_touches();
  if (pos_ == until_) {
    stop_ = Stop::kUntil;
    return emu.stop();
  }
  const bool checkpoint_due =
      opening_ && !opt_.translated &&
      (checkpoints_.size() == 0 ||
       (opt_.checkpoint_every && pos_ % opt_.checkpoint_every == 0 && pos_ > checkpoints_.at(checkpoints_.size() - 1).position));
  if (checkpoint_due) {
    stop_ = Stop::kCheckpoint;
    return emu.stop();
  }
  if (pos_ && pos_ % kSegment == 0 && segment_at_ != pos_) {
    segment_at_ = pos_;
    stop_ = Stop::kSegment;
    return emu.stop();
  }
  if (watcher_ && !(saw_before_ && last_before_ == pos_)) {
    saw_before_ = true;
    last_before_ = pos_;
    if (watcher_->before(pos_, pc)) {
      stop_ = Stop::kWatched;
      return emu.stop();
    }
  }
  pos_++;
  executed_++;
}

// Hands the writes made since the last call (by instruction pos_ - 1) to
// the watcher; true when it wants to stop.
bool ReplayCursor::flush_writes() {
  const std::vector<MemWrite> &w = exec_->emulator().writes();
  bool stop = false;
  for (; seen_writes_ < w.size(); seen_writes_++) {
    if (opening_) touches_.push_back(Touch{pos_, w[seen_writes_].addr, w[seen_writes_].size});
    if (watcher_ && pos_ && watcher_->wrote(pos_ - 1, w[seen_writes_])) stop = true;
  }
  return stop;
}

// The bytes the log server placed for the instruction before: its reads
// and a sleep's return slot.
void ReplayCursor::note_log_touches() {
  const ServeState &st = exec_->server().state();
  for (; seen_reads_ < st.reads; seen_reads_++) {
    const LoggedRead &r = log_->reads[seen_reads_];
    if (!(r.flags & kReadFailed)) touches_.push_back(Touch{pos_, read_address(r, *cap_), r.bytes.size()});
  }
  for (; seen_resumes_ < st.resumes; seen_resumes_++)
    touches_.push_back(Touch{pos_, log_->resumes[seen_resumes_].gpr[KJIT_REG_RSP] - 8, 8});
}

ReplayCursor::Outcome ReplayCursor::run_to(uint64_t until, Watcher *watcher,
                                           const std::function<bool()> &interrupted) {
  error_.clear();
  if (pos_ == end_) return Outcome::kEnd;
  if (until < pos_) {
    error_ = "cannot run forward to instruction " + std::to_string(until) + " from " + std::to_string(pos_);
    return Outcome::kError;
  }
  if (until == pos_) return Outcome::kReached;
  until_ = until;
  watcher_ = watcher;
  saw_before_ = false;
  for (;;) {
    stop_ = Stop::kNone;
    const uint64_t left = opt_.budget > pos_ ? opt_.budget - pos_ : 0;
    const RunResult r = exec_->run(left + 1);  // + the instruction a stop left to run
    if (r.reason == StopReason::kStopped) {
      switch (stop_) {
        case Stop::kUntil: return Outcome::kReached;
        case Stop::kWatched: return Outcome::kWatched;
        case Stop::kCheckpoint:
          error_ = take_checkpoint();
          if (!error_.empty()) return Outcome::kError;
          continue;
        case Stop::kSegment:
          if (interrupted && interrupted()) return Outcome::kInterrupted;
          continue;
        case Stop::kNone: break;
      }
      error_ = "the run stopped at " + hex(r.pc) + " for no reason the cursor knows";
      return Outcome::kError;
    }
    // The sentinel, a fault, the budget: where the invocation ends.
    const bool watched = flush_writes();
    if (opening_) note_log_touches();
    if (end_ == kUnknownEnd) {
      end_ = pos_;
      ending_ = r;
    } else if (pos_ != end_) {
      error_ = "the replay ended after " + std::to_string(pos_) + " instructions, not " + std::to_string(end_) +
               " as before (" + stop_reason_name(r.reason) + ")";
      return Outcome::kError;
    }
    return watched ? Outcome::kWatched : Outcome::kEnd;
  }
}

std::set<uint64_t> ReplayCursor::pages_touched_since(size_t writes, const ServeState &served) {
  std::set<uint64_t> pages;
  auto add = [&pages](uint64_t a, uint64_t n) {
    for (uint64_t p = page_down(a); p <= page_down(a + n - 1); p += kPageSize) pages.insert(p);
  };
  const std::vector<MemWrite> &w = exec_->emulator().writes();
  for (size_t i = writes; i < w.size(); i++) add(w[i].addr, w[i].size);
  const ServeState &st = exec_->server().state();
  for (size_t i = served.reads; i < st.reads; i++)
    if (!(log_->reads[i].flags & kReadFailed)) add(read_address(log_->reads[i], *cap_), log_->reads[i].bytes.size());
  for (size_t i = served.resumes; i < st.resumes; i++) add(log_->resumes[i].gpr[KJIT_REG_RSP] - 8, 8);
  return pages;
}

std::string ReplayCursor::take_checkpoint() {
  std::set<uint64_t> dirty;
  if (checkpoints_.size()) {
    const Checkpoints::Taken &last = checkpoints_.at(checkpoints_.size() - 1);
    dirty = pages_touched_since(last.writes, last.log.st);
  }
  return checkpoints_.take(pos_, exec_->emulator(), exec_->server().save(), dirty);
}

std::string ReplayCursor::seek(uint64_t position) {
  error_.clear();
  if (position > end_) return "instruction " + std::to_string(position) + " is past the end (" + std::to_string(end_) + ")";
  if (position < pos_) {
    if (opt_.translated) {
      // No checkpoints: the engine's cache is state a snapshot of the CPU
      // and memory would not hold.  From the start, with a new engine.
      std::string err = start_execution();
      if (!err.empty()) return err;
    } else {
      const Checkpoints::Taken &t = checkpoints_.at(checkpoints_.last_at_or_before(position));
      const std::set<uint64_t> dirty = pages_touched_since(t.writes, t.log.st);
      std::string err = checkpoints_.restore(checkpoints_.last_at_or_before(position), exec_->emulator(), dirty);
      if (!err.empty()) return err;
      exec_->server().restore(t.log);
      pos_ = t.position;
      seen_writes_ = t.writes;
    }
  }
  const Outcome o = run_to(position, nullptr, {});
  if (o == Outcome::kReached || (o == Outcome::kEnd && pos_ == position)) return "";
  return error_.empty() ? "cannot reach instruction " + std::to_string(position) + " (at " + std::to_string(pos_) + ")"
                        : error_;
}

std::vector<uint64_t> ReplayCursor::checkpoint_positions() const {
  std::vector<uint64_t> v;
  for (size_t k = 0; k < checkpoints_.size(); k++) v.push_back(checkpoints_.at(k).position);
  if (v.empty()) v.push_back(0);
  return v;
}

}  // namespace kjit::sim
