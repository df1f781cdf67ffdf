// SPDX-License-Identifier: GPL-2.0
// Runs: the blocks of a trace's callee copy that run exactly when the block
// before them does (kjit_block_runs_with_previous), and bbcount counting
// each run with one counter.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine_fixture.h"
#include "kjit_examples.h"

namespace kjit {
namespace {

using test::kText;

constexpr uint64_t kNative = kText + 0x1000;  // no code: never translated

// What the plugins were told about each block, in build order.
struct Seen {
  uint64_t pc;
  int runs_with_previous, may_lead_run, runs_unless_taken;
};
std::vector<Seen> g_seen;
uint32_t g_dropped;
std::vector<uint32_t> g_resets;  // halves, in order

void probe_block(kjit_block *b, void *) {
  g_seen.push_back({kjit_block_pc(b), kjit_block_runs_with_previous(b), kjit_block_may_lead_run(b),
                    kjit_block_runs_unless_previous_taken(b)});
}
void probe_dropped(kjit_block *, void *) { g_dropped++; }
void probe_reset(uint32_t half, void *) { g_resets.push_back(half); }
const kjit_plugin kProbe = {"runs-probe", nullptr, probe_block, nullptr, nullptr, nullptr, nullptr, probe_dropped, probe_reset};

class RunsTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    add_code();
    g_seen.clear();
    g_dropped = 0;
    g_resets.clear();
  }
  void TearDown() override {
    kjit_unregister_plugin(&kProbe);
    kjit_unregister_plugin(kjit_example_bbcount());
    EngineTest::TearDown();
  }
  static void add_code() {
    std::vector<uint8_t> code(0x200, 0xcc);
    auto put = [&](uint32_t at, std::initializer_list<uint8_t> bytes) {
      std::copy(bytes.begin(), bytes.end(), code.begin() + at);
    };
    auto rel32 = [&](uint32_t at, uint8_t op, uint64_t target) {
      uint32_t rel = static_cast<uint32_t>(target - (kText + at + 5));
      put(at, {op, static_cast<uint8_t>(rel), static_cast<uint8_t>(rel >> 8), static_cast<uint8_t>(rel >> 16),
               static_cast<uint8_t>(rel >> 24)});
    };
    // 0x00: call P ; jmp kNative                  P: mov eax, 7 ; ret
    rel32(0x00, 0xe8, kText + 0x20);
    rel32(0x05, 0xe9, kNative);
    put(0x20, {0xb8, 0x07, 0x00, 0x00, 0x00, 0xc3});
    // 0x40: call P2 ; jmp kNative   P2: call P3 ; test eax, eax ; ret   P3: mov eax, 3 ; ret
    rel32(0x40, 0xe8, kText + 0x60);
    rel32(0x45, 0xe9, kNative);
    rel32(0x60, 0xe8, kText + 0x80);
    put(0x65, {0x85, 0xc0, 0xc3});  // test eax, eax ; ret (a continuation that writes the flags first)
    put(0x80, {0xb8, 0x03, 0x00, 0x00, 0x00, 0xc3});
    // 0xa0: call F ; jmp kNative
    // F: test edi, edi ; je G ; mov eax, 1 ; ret      G: mov eax, 2 ; ret
    rel32(0xa0, 0xe8, kText + 0xc0);
    rel32(0xa5, 0xe9, kNative);
    put(0xc0, {0x85, 0xff, 0x74, 0x06, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3, 0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3});
    // 0x100: mov eax, [rdi] (a user access) ; call P ; jmp kNative
    put(0x100, {0x8b, 0x07});
    rel32(0x102, 0xe8, kText + 0x20);
    rel32(0x107, 0xe9, kNative);
    // 0x120: call Q              Q: mov eax, 9 ; jmp kNative (no return)
    rel32(0x120, 0xe8, kText + 0x140);
    put(0x140, {0xb8, 0x09, 0x00, 0x00, 0x00});
    rel32(0x145, 0xe9, kNative);
    // 0x160: call L ; jmp kNative          L: dec edi ; jne L ; mov eax, 4 ; ret
    rel32(0x160, 0xe8, kText + 0x180);
    rel32(0x165, 0xe9, kNative);
    put(0x180, {0xff, 0xcf, 0x75, 0xfc, 0xb8, 0x04, 0x00, 0x00, 0x00, 0xc3});
    test_shim_add_code(kText, code);
  }
  // P, P2, P3 and F as compiled C functions: their returns into the
  // caller's copy have no compare.
  static void c_functions() {
    test_shim_add_c_function(kText + 0x20, kText + 0x26);
    test_shim_add_c_function(kText + 0x60, kText + 0x68);
    test_shim_add_c_function(kText + 0x80, kText + 0x86);
    test_shim_add_c_function(kText + 0xc0, kText + 0xd0);
    test_shim_add_c_function(kText + 0x180, kText + 0x18a);
  }
  static void probe() { ASSERT_EQ(kjit_register_plugin(&kProbe), 0); }
  static void bbcount(uint32_t max_runs = 32) {
    ASSERT_EQ(kjit_bbcount_init_runs(64, max_runs), 0);
    ASSERT_EQ(kjit_register_plugin(kjit_example_bbcount()), 0);
  }
  static const Seen *seen(uint64_t pc) {
    for (const Seen &s : g_seen)
      if (s.pc == pc) return &s;
    return nullptr;
  }
  static uint64_t count_of(uint64_t pc) {
    uint64_t c = 0;
    for (uint32_t i = 0; i < kjit_bbcount_blocks(); i++)
      c += kjit_bbcount_pc(i) == pc ? kjit_bbcount_count(i) : 0;
    return c;
  }
  uint64_t run(uint64_t pc, uint64_t rdi = 0) { return run_to(kjit_engine_enter(pc), kNative, rdi); }
  // The code of the translation of `pc` in the active half starts with `bytes`.
  static bool code_starts_with(uint64_t pc, std::initializer_list<uint8_t> bytes) {
    const Epoch &e = active();
    for (uint32_t k = 0; k < e.nblocks; k++) {
      const Block *b = e.blocks[k];
      if (b->orig_pc != pc || b->code_size < bytes.size()) continue;
      if (std::memcmp(e.write_at(b->code_offset), bytes.begin(), bytes.size()) == 0) return true;
    }
    return false;
  }
  // Each of `pcs` counted `n` times.
  static void expect_counts(std::initializer_list<uint64_t> pcs, uint64_t n, const char *why = "") {
    for (uint64_t pc : pcs) EXPECT_EQ(count_of(kText + pc), n) << why << " block +0x" << std::hex << pc;
  }
};

#define EXPECT_SEEN(pc, runs, leads)                             \
  do {                                                           \
    const Seen *s = seen(kText + (pc));                          \
    ASSERT_NE(s, nullptr) << "no block at +" #pc;                \
    EXPECT_EQ(s->runs_with_previous, runs) << "block at +" #pc;  \
    EXPECT_EQ(s->may_lead_run, leads) << "block at +" #pc;       \
  } while (0)

TEST_F(RunsTest, ACalleesCopyRunsWithTheCallersBlock) {
  c_functions();
  probe();
  kjit_engine_enter(kText);
  ASSERT_EQ(stats().trace_fallthroughs, 2u);
  EXPECT_SEEN(0x00, 0, 1);
  EXPECT_SEEN(0x20, 1, 0);  // P's ret goes back to depth 0
  EXPECT_SEEN(0x05, 0, 0);  // in the table: other blocks may jump there
}

// Down two calls and back up one: the whole copy is one run.
TEST_F(RunsTest, ARunGoesDownAndBackUpThroughCopies) {
  c_functions();
  probe();
  kjit_engine_enter(kText + 0x40);
  ASSERT_EQ(stats().trace_fallthroughs, 4u);
  EXPECT_SEEN(0x40, 0, 1);
  EXPECT_SEEN(0x60, 1, 1);
  EXPECT_SEEN(0x80, 1, 1);  // its return, unchecked, into P2's copy
  EXPECT_SEEN(0x65, 1, 0);
  EXPECT_SEEN(0x45, 0, 0);
}

// A return that compares (assembly may have rewritten its slot) may go
// elsewhere: the continuation laid out behind it is no member.
TEST_F(RunsTest, AReturnThatComparesEndsTheRun) {
  probe();
  kjit_engine_enter(kText + 0x40);
  EXPECT_SEEN(0x60, 1, 1);
  EXPECT_SEEN(0x80, 1, 0);
  EXPECT_SEEN(0x65, 0, 0);
}

// The fall-through laid out after a conditional branch runs only when the
// branch is not taken.
TEST_F(RunsTest, AConditionalBranchsNotTakenSideRunsUnlessTaken) {
  c_functions();
  probe();
  kjit_engine_enter(kText + 0xa0);
  EXPECT_SEEN(0xc0, 1, 1);
  EXPECT_SEEN(0xc4, 0, 0);
  EXPECT_EQ(seen(kText + 0xc0)->runs_unless_taken, 0);
  EXPECT_EQ(seen(kText + 0xc4)->runs_unless_taken, 1);
}

// In the table (depth 0) a branch's fall-through may be entered from
// elsewhere: no run.
TEST_F(RunsTest, ABranchAtTheTopOfATraceLeadsNoRun) {
  c_functions();
  probe();
  kjit_engine_enter(kText + 0xc0);
  EXPECT_SEEN(0xc0, 0, 0);
  EXPECT_SEEN(0xc4, 0, 0);
  EXPECT_EQ(seen(kText + 0xc4)->runs_unless_taken, 0);
}

// A fault on the user access continues at its fixup, not in the callee.
TEST_F(RunsTest, AUserAccessEndsTheRun) {
  c_functions();
  test_shim_add_extable(kText + 0x100, 0, 1);
  probe();
  kjit_engine_enter(kText + 0x100);
  EXPECT_SEEN(0x100, 0, 0);
  EXPECT_SEEN(0x20, 0, 0);
}

TEST_F(RunsTest, OneCounterCountsTheWholeRun) {
  c_functions();
  bbcount();
  for (int i = 0; i < 3; i++) EXPECT_EQ(run(kText + 0x40), 3u);
  expect_counts({0x40, 0x60, 0x80, 0x65, 0x45}, 3);
  EXPECT_EQ(kjit_bbcount_total(), 15u);
  // P's copy in the trace from 0x00 has no counter: mov eax, 7 ; pop rcx.
  EXPECT_EQ(run(kText), 7u);
  expect_counts({0x00, 0x20, 0x05}, 1);
  const Block *p = active().block_containing(active().table.find(kText)->exec + active().table.find(kText)->code_size);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->orig_pc, kText + 0x20);
  static const uint8_t kBare[] = {0xb8, 0x07, 0x00, 0x00, 0x00, 0x59};
  ASSERT_GE(p->code_size, sizeof(kBare));
  EXPECT_EQ(std::memcmp(active().write_at(p->code_offset), kBare, sizeof(kBare)), 0);
  kjit_bbcount_clear();
  expect_counts({0x40, 0x60, 0x80, 0x65, 0x45, 0x00, 0x20, 0x05}, 0, "after clear");
}

// Members of runs and blocks with counters of their own add up in one entry.
TEST_F(RunsTest, ABlockInARunAndOnItsOwnHasOneCount) {
  c_functions();
  test_shim_add_extable(kText + 0x100, 0, 1);
  bbcount();
  uint64_t readable = kStackTop - 0x400;
  run(kText);
  run(kText + 0x100, readable);
  run(kText + 0x100, readable);
  expect_counts({0x20}, 3);
  expect_counts({0x100, 0x107}, 2);
}

TEST_F(RunsTest, BothSidesOfABranchInACopyAreCounted) {
  c_functions();
  bbcount();
  EXPECT_EQ(run(kText + 0xa0, 1), 1u);
  EXPECT_EQ(run(kText + 0xa0, 0), 2u);  // G's copy, built by the gate
  EXPECT_EQ(run(kText + 0xa0, 0), 2u);
  expect_counts({0xa0, 0xc0, 0xa5}, 3);
  expect_counts({0xc4}, 1);
  expect_counts({0xca}, 2);
}

// The not-taken side's copy has no counter (mov eax, 1 ; pop rcx): its
// count is F's run less je's taken edge, whatever the mix of sides.
TEST_F(RunsTest, TheNotTakenSideCountsWithoutACounter) {
  c_functions();
  bbcount();
  for (uint64_t rdi : {1, 0, 1, 0, 0, 1, 1}) EXPECT_EQ(run(kText + 0xa0, rdi), rdi ? 1u : 2u);
  EXPECT_TRUE(code_starts_with(kText + 0xc4, {0xb8, 0x01, 0x00, 0x00, 0x00, 0x59}));
  expect_counts({0xa0, 0xc0, 0xa5}, 7);
  expect_counts({0xc4}, 4);
  expect_counts({0xca}, 3);
  EXPECT_EQ(kjit_bbcount_total(), 28u);
  kjit_bbcount_clear();
  expect_counts({0xa0, 0xc0, 0xc4, 0xca}, 0, "after clear");
  run(kText + 0xa0, 1);
  expect_counts({0xc0, 0xc4}, 1, "after clear and one run");
}

// A backward branch closes a loop: its taken side is the hot one, and its
// not-taken side, laid out after it, counts on its own (the loop's exit
// also runs from the copy the back edge built).
TEST_F(RunsTest, ALoopsExitIsNoMemberOfTheLoopsRun) {
  c_functions();
  probe();
  bbcount();
  EXPECT_EQ(run(kText + 0x160, 1), 4u);
  EXPECT_EQ(seen(kText + 0x184)->runs_unless_taken, 1);
  EXPECT_EQ(run(kText + 0x160, 3), 4u);
  EXPECT_EQ(run(kText + 0x160, 2), 4u);
  expect_counts({0x160, 0x165, 0x184}, 3);
  expect_counts({0x180}, 6);
}

// Not-taken runs fold with the rest when their half is reset.
TEST_F(RunsTest, ANotTakenRunFoldsWithItsHalf) {
  c_functions();
  bbcount();
  run(kText + 0xa0, 1);
  run(kText + 0xa0, 0);
  ASSERT_EQ(kjit_engine_flush(), 0);
  ASSERT_EQ(kjit_engine_flush(), 0);  // the first half again: reset, folded
  expect_counts({0xc0}, 2, "folded");
  expect_counts({0xc4, 0xca}, 1, "folded");
  run(kText + 0xa0, 1);
  expect_counts({0xc0}, 3, "folded and new");
  expect_counts({0xc4}, 2, "folded and new");
}

// No room for a branch's two cells: the not-taken side counts on its own.
TEST_F(RunsTest, NoRoomForABranchsCellsCountsTheSideOnItsOwn) {
  c_functions();
  bbcount(2);  // one cell a half: the trace's run, nothing more
  for (uint64_t rdi : {1, 0, 1}) run(kText + 0xa0, rdi);
  EXPECT_FALSE(code_starts_with(kText + 0xc4, {0xb8, 0x01, 0x00, 0x00, 0x00, 0x59}));
  expect_counts({0xa0, 0xc0, 0xa5}, 3);
  expect_counts({0xc4}, 2);
  expect_counts({0xca}, 1);
}

// With no run cell left, a trace's blocks get counters of their own.
TEST_F(RunsTest, RunsUsedUpFallBackToCountersOfTheirOwn) {
  c_functions();
  bbcount(1);  // no run at all (one would take a half)
  run(kText);
  run(kText + 0x40);
  run(kText + 0x40);
  expect_counts({0x00, 0x20, 0x05}, 1);
  expect_counts({0x40, 0x60, 0x80, 0x65, 0x45}, 2);
}

// A half's runs die with its translations: when the engine resets the half
// their cells go into the counts, and the half has room for runs again.
TEST_F(RunsTest, AResetHalfFoldsItsRunsAndMakesRoomAgain) {
  c_functions();
  bbcount(2);  // one run a half
  probe();     // (a registration flushes too)
  g_resets.clear();
  const uint32_t first = active().index;
  run(kText);                             // its run
  ASSERT_EQ(kjit_engine_flush(), 0);      // into the other half
  run(kText);                             // its run there
  run(kText + 0x40);                      // no run left in that half: counters of its own
  EXPECT_EQ(kjit_bbcount_runs(), 2u);
  ASSERT_EQ(kjit_engine_flush(), 0);      // back into the first, reset before
  ASSERT_EQ(g_resets, (std::vector<uint32_t>{first ^ 1, first})) << "reset halves";
  EXPECT_EQ(kjit_bbcount_runs(), 1u);     // the other half's
  expect_counts({0x00, 0x20, 0x05}, 2, "after the fold");
  run(kText + 0x40);                      // room again: one run for the whole trace
  run(kText);
  EXPECT_EQ(kjit_bbcount_runs(), 2u);
  expect_counts({0x40, 0x60, 0x80, 0x65, 0x45}, 2);
  expect_counts({0x00, 0x20, 0x05}, 3);
  EXPECT_EQ(kjit_bbcount_total(), 19u);
  kjit_bbcount_clear();
  expect_counts({0x00, 0x20, 0x40, 0x65}, 0, "after clear");
}

// Near the end of a cache half the callee's copy may not fit behind its
// caller: the build gives it up after bbcount saw it (on_block_dropped),
// and every room still counts each block once per run.  (Q never returns:
// a callee built on its own after a flush may return through a return
// site, the indirect gate, which this harness does not serve.)
TEST_F(RunsTest, EveryRoomLeftCountsEachBlockOnce) {
  uint32_t rooms_with_drops = 0;
  for (uint32_t room = 0; room < 256; room++) {
    ASSERT_EQ(init(nullptr), 0);
    add_code();
    g_dropped = 0;
    bbcount();
    probe();
    active().code_used = active().code_size - room;
    EXPECT_EQ(run(kText + 0x120), 9u) << room;
    EXPECT_EQ(run(kText + 0x120), 9u) << room;
    expect_counts({0x120, 0x140}, 2, ("room " + std::to_string(room)).c_str());
    EXPECT_EQ(kjit_bbcount_total(), 4u) << room;
    rooms_with_drops += g_dropped > 0;
    kjit_unregister_plugin(&kProbe);
    kjit_unregister_plugin(kjit_example_bbcount());
  }
  EXPECT_GT(rooms_with_drops, 0u);  // the dropped path ran
}

}  // namespace
}  // namespace kjit
