// SPDX-License-Identifier: GPL-2.0
// The replay cursor (tools/kjit-sim/replay_cursor.h) on the committed
// kernel captures: it ends where the replay ends, and every position it
// goes back to through a checkpoint holds the state a run forward from the
// start reaches (registers, flags, every writable page, the writes made).
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "replay.h"
#include "sample_captures.h"
#include "replay_cursor.h"
#include "test_code.h"

namespace kjit::sim {
namespace {

struct State {
  Regs regs;
  size_t writes = 0;
  std::map<uint64_t, std::vector<uint8_t>> pages;  // every writable page
};

State state_of(ReplayCursor &c) {
  State s;
  Emulator &emu = c.emulator();
  s.regs = emu.regs();
  s.writes = emu.writes().size();
  for (const MappedRange &m : emu.mapped())
    if (m.perms & kPermW)
      for (uint64_t p = m.begin; p < m.end; p += kPageSize) {
        std::vector<uint8_t> b(kPageSize);
        EXPECT_TRUE(emu.read(p, b.data(), kPageSize));
        s.pages[p] = std::move(b);
      }
  return s;
}

void expect_same(const State &a, const State &b, uint64_t position) {
  SCOPED_TRACE("position " + std::to_string(position));
  for (int r = 0; r < 16; r++) EXPECT_EQ(a.regs.gpr[r], b.regs.gpr[r]) << "gpr " << r;
  EXPECT_EQ(a.regs.rip, b.regs.rip);
  EXPECT_EQ(a.regs.rflags, b.regs.rflags);
  EXPECT_EQ(a.writes, b.writes);
  ASSERT_EQ(a.pages.size(), b.pages.size());
  for (const auto &[p, bytes] : a.pages) EXPECT_TRUE(bytes == b.pages.at(p)) << "page 0x" << std::hex << p;
}

struct Loaded {
  Capture cap;
  ReplayLog log;
};

Loaded load(const std::string &f) {
  Loaded l;
  EXPECT_EQ(load_capture_file(f, &l.cap), "");
  EXPECT_EQ(parse_replay_log(l.cap, &l.log), "");
  return l;
}

TEST(ReplayCursor, EndsWhereTheReplayEnds) {
  for (const std::string &f : captures()) {
    SCOPED_TRACE(f);
    const Loaded l = load(f);
    ReplayReport rep;
    ReplayOptions ro;
    ro.tools.clear();
    ASSERT_EQ(replay_capture(l.cap, l.log, ro, &rep), "");
    ReplayCursor c;
    ASSERT_EQ(c.open(l.cap, l.log, ReplayCursor::Options{}), "");
    EXPECT_EQ(c.position(), 0u);
    EXPECT_EQ(c.emulator().rip(), l.cap.entry_pc);
    EXPECT_EQ(c.end_position(), rep.original.insns);
    EXPECT_EQ(c.ending().reason, StopReason::kSentinel) << c.ending().message;
    ASSERT_EQ(c.run_to(~uint64_t{0}, nullptr, {}), ReplayCursor::Outcome::kEnd);
    EXPECT_EQ(c.position(), c.end_position());
    EXPECT_EQ(c.emulator().rip(), l.cap.sentinel);
    EXPECT_EQ(c.emulator().gpr(KJIT_REG_RAX), rep.original.final_regs.gpr[KJIT_REG_RAX]);
    EXPECT_EQ(c.server().state().reads, l.log.reads.size());
    EXPECT_EQ(c.server().state().blocks, l.log.blocks.size());
    EXPECT_FALSE(c.touches().empty());
  }
}

// Backward through checkpoints every 16 instructions, against a cursor
// that only ever runs forward from the start.
TEST(ReplayCursor, GoingBackIsTheSameStateAsRunningForward) {
  for (const std::string &f : captures()) {
    SCOPED_TRACE(f);
    const Loaded l = load(f);
    ReplayCursor::Options every16;
    every16.checkpoint_every = 16;
    ReplayCursor back, forward;
    ASSERT_EQ(back.open(l.cap, l.log, every16), "");
    ReplayCursor::Options none;
    none.checkpoint_every = 0;
    ASSERT_EQ(forward.open(l.cap, l.log, none), "");
    ASSERT_EQ(back.end_position(), forward.end_position());
    const uint64_t end = back.end_position();
    std::vector<uint64_t> at;
    for (uint64_t p = 0; p < end; p += 1 + end / 23) at.push_back(p);
    at.push_back(end - 1);
    at.push_back(end);
    std::map<uint64_t, State> ahead;
    for (uint64_t p : at) {
      ASSERT_EQ(forward.seek(p), "");
      ahead[p] = state_of(forward);
    }
    ASSERT_EQ(back.seek(end), "");
    for (auto it = at.rbegin(); it != at.rend(); ++it) {
      ASSERT_EQ(back.seek(*it), "");
      ASSERT_EQ(back.position(), *it);
      expect_same(state_of(back), ahead[*it], *it);
    }
  }
}

// The watcher sees each instruction once, in order, and each write as made
// by the instruction before the stop; a stop is where it asked.
TEST(ReplayCursor, TheWatcherStopsBeforeAnInstructionAndAfterAWrite) {
  const Loaded l = load(kDir + "/getppid.kjitcap");
  ReplayCursor c;
  ASSERT_EQ(c.open(l.cap, l.log, ReplayCursor::Options{}), "");
  struct Log : ReplayCursor::Watcher {
    std::vector<uint64_t> pcs;
    std::vector<std::pair<uint64_t, MemWrite>> writes;
    uint64_t stop_before = ~uint64_t{0};
    bool stop_on_write = false;
    bool before(uint64_t position, uint64_t pc) override {
      EXPECT_EQ(position, pcs.size());
      pcs.push_back(pc);
      return position == stop_before;
    }
    bool wrote(uint64_t position, const MemWrite &w) override {
      writes.push_back({position, w});
      return stop_on_write;
    }
  } all;
  ASSERT_EQ(c.run_to(~uint64_t{0}, &all, {}), ReplayCursor::Outcome::kEnd);
  ASSERT_EQ(all.pcs.size(), c.end_position());
  EXPECT_EQ(all.pcs[0], l.cap.entry_pc);
  ASSERT_FALSE(all.writes.empty());
  // Again from the start: stop before instruction 10, then at the first write.
  ASSERT_EQ(c.seek(0), "");
  Log some;
  some.stop_before = 10;
  ASSERT_EQ(c.run_to(~uint64_t{0}, &some, {}), ReplayCursor::Outcome::kWatched);
  EXPECT_EQ(c.position(), 10u);
  EXPECT_EQ(c.emulator().rip(), all.pcs[10]);
  ASSERT_EQ(c.seek(0), "");
  Log first_write;
  first_write.stop_on_write = true;
  ASSERT_EQ(c.run_to(~uint64_t{0}, &first_write, {}), ReplayCursor::Outcome::kWatched);
  ASSERT_EQ(first_write.writes.size(), 1u);
  EXPECT_EQ(c.position(), all.writes[0].first + 1);
  EXPECT_EQ(first_write.writes[0].second.addr, all.writes[0].second.addr);
}

// The translated view (the engine's code cache) ends at the sentinel with
// the original's return value, and going back starts the engine again to
// the same state.
TEST(ReplayCursor, TranslatedViewGoesBackToTheSameState) {
  const Loaded l = load(kDir + "/fcntl.kjitcap");
  ReplayCursor orig, tr;
  ASSERT_EQ(orig.open(l.cap, l.log, ReplayCursor::Options{}), "");
  ASSERT_EQ(orig.run_to(~uint64_t{0}, nullptr, {}), ReplayCursor::Outcome::kEnd);
  ReplayCursor::Options o;
  o.translated = true;
  ASSERT_EQ(tr.open(l.cap, l.log, o), "");
  EXPECT_EQ(tr.ending().reason, StopReason::kSentinel) << tr.ending().message;
  EXPECT_NE(tr.emulator().rip(), l.cap.entry_pc);  // the entry's translation
  EXPECT_EQ(tr.original_pc(tr.emulator().rip()), l.cap.entry_pc);
  const uint64_t mid = tr.end_position() / 2;
  ASSERT_EQ(tr.seek(mid), "");
  const Regs at_mid = tr.emulator().regs();
  ASSERT_EQ(tr.seek(tr.end_position()), "");
  EXPECT_EQ(tr.emulator().gpr(KJIT_REG_RAX), orig.emulator().gpr(KJIT_REG_RAX));
  ASSERT_EQ(tr.seek(mid), "");
  const Regs again = tr.emulator().regs();
  for (int r = 0; r < 16; r++) EXPECT_EQ(at_mid.gpr[r], again.gpr[r]) << r;
  EXPECT_EQ(at_mid.rip, again.rip);
}

// A long invocation (a loop of 400,000 instructions): one instruction back
// from the end re-runs at most one checkpoint interval, and from the start
// without checkpoints.
TEST(ReplayCursor, OneStepBackRunsOneIntervalAtMost) {
  // mov ecx, 200000; 1: dec ecx; jnz 1b; ret
  const Capture cap = test::make_capture({0xb9, 0x40, 0x0d, 0x03, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3});
  ReplayLog log;
  log.present = true;
  log.kernel.end = EndReason::kReturned;
  for (uint64_t every : {uint64_t{1000}, uint64_t{0}}) {
    SCOPED_TRACE(every);
    ReplayCursor c;
    ReplayCursor::Options o;
    o.checkpoint_every = every;
    ASSERT_EQ(c.open(cap, log, o), "");
    EXPECT_EQ(c.end_position(), 1 + 2 * 200000 + 1u);
    ASSERT_EQ(c.seek(c.end_position()), "");
    const uint64_t before = c.instructions_run();
    ASSERT_EQ(c.seek(c.end_position() - 1), "");
    const uint64_t cost = c.instructions_run() - before;
    if (every) {
      EXPECT_LE(cost, every);
    } else {
      EXPECT_EQ(cost, c.end_position() - 1);
    }
    EXPECT_EQ(c.emulator().rip(), test::kCode + 9);  // the ret
    EXPECT_EQ(c.emulator().gpr(KJIT_REG_RCX), 0u);
  }
}

}  // namespace
}  // namespace kjit::sim
