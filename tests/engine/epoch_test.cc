// SPDX-License-Identifier: GPL-2.0
// The code cache's memory: the arena (bump allocation, exhaustion, reset),
// an epoch's records and layout, and the epoch life cycle the engine drives
// (active -> retired on a flush or a full half -> quiesced -> free -> reused).
#include "core/epoch.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/ibl.h"
#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::EngineTest;
using test::kCodeExec;
using test::kText;

TEST(Arena, AllocationsAreAlignedZeroedAndDisjoint) {
  std::vector<uint8_t> mem(256, 0xab);
  Arena a;
  a.init(mem.data(), mem.size());
  auto *p = static_cast<uint8_t *>(a.alloc(3, 1));
  auto *q = static_cast<uint8_t *>(a.alloc(16, 16));
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 16, 0u);
  EXPECT_GE(q, p + 3);
  for (int i = 0; i < 16; i++) EXPECT_EQ(q[i], 0) << i;
  EXPECT_EQ(a.used(), a.offset_of(q) + 16);
  EXPECT_TRUE(a.contains(q));
  EXPECT_EQ(a.at(a.offset_of(q)), q);
}

TEST(Arena, ExhaustionFailsWithoutUsingMemory) {
  std::vector<uint8_t> mem(64);
  Arena a;
  a.init(mem.data(), mem.size());
  ASSERT_NE(a.alloc(40), nullptr);
  EXPECT_EQ(a.alloc(32), nullptr);
  EXPECT_EQ(a.used(), 40u);
  EXPECT_EQ(a.alloc(~0ull - 8), nullptr);  // wraps around: still refused
  EXPECT_NE(a.alloc(24), nullptr);         // what is left still serves
  EXPECT_EQ(a.alloc(1), nullptr);
}

TEST(Arena, ResetReusesFromTheStart) {
  std::vector<uint8_t> mem(64);
  Arena a;
  a.init(mem.data(), mem.size());
  void *first = a.alloc(64);
  ASSERT_NE(first, nullptr);
  memset(first, 0xff, 64);
  a.reset();
  EXPECT_EQ(a.used(), 0u);
  auto *again = static_cast<uint8_t *>(a.alloc(64));
  ASSERT_EQ(again, first);
  EXPECT_EQ(again[63], 0);  // zeroed again
}

// A half's tables leave most of its arena to the blocks' records: sized
// from the code alone, 8 MiB of code would take 97% of 8 MiB of arena, and
// the half would be full at a few hundred blocks.
TEST(EpochSizing, TablesTakeAtMostAQuarterOfTheArena) {
  const uint64_t arena = 8 << 20;
  const uint32_t n = Epoch::table_capacity(8 << 20, arena);
  EXPECT_LE(n * Epoch::kTableBytesPerBlock, arena / 4);
  EXPECT_GE(n * Epoch::kTableBytesPerBlock, arena / 4 - Epoch::kTableBytesPerBlock);
  // The module's default half (2 MiB of code, 16 MiB of arena) is sized by
  // its code.
  EXPECT_EQ(Epoch::table_capacity(2 << 20, 16 << 20), (2u << 20) / 64 + 16);
}

using EpochTest = EngineTest;

TEST_F(EpochTest, RecordIdsRoundTripAndNameTheirEpoch) {
  for (Epoch &e : g_engine.epochs) {
    if (e.state == EpochState::kFree) {
      ASSERT_TRUE(e.reset());
    }
    Exit *x = e.arena.alloc_array<Exit>(1);
    ASSERT_NE(x, nullptr);
    uint32_t id = e.id_of(x);
    EXPECT_EQ(id >> 31, e.index);
    EXPECT_EQ(e.record_of(id), x);
  }
}

TEST_F(EpochTest, ResetEmptiesTheEpoch) {
  Epoch &e = active();
  Block *b = e.arena.alloc_array<Block>(1);
  e.table.slot(kText)->block = b;
  e.blocks[e.nblocks++] = b;
  e.code_used += 100;
  uint64_t before = e.code_used;
  ASSERT_TRUE(e.reset());
  EXPECT_EQ(e.table.find(kText), nullptr);
  EXPECT_EQ(e.nblocks, 0u);
  EXPECT_LT(e.code_used, before);
  // The IBL sits at the start of the fresh epoch and is empty.
  EXPECT_NE(e.ibl_routine, 0u);
  EXPECT_EQ(ibl_lookup(e, kText), 0u);
}

TEST_F(EpochTest, BlockContainingFindsTheBlockOfAnyByte) {
  Epoch &e = active();
  // Three blocks in code order with a gap (stubs of no block) after the second.
  const uint32_t starts[] = {0x1000, 0x1040, 0x1100}, sizes[] = {0x40, 0x20, 0x10};
  Block *bs[3];
  for (int i = 0; i < 3; i++) {
    bs[i] = e.arena.alloc_array<Block>(1);
    bs[i]->exec = e.exec_at(starts[i]);
    bs[i]->code_size = sizes[i];
    e.blocks[e.nblocks++] = bs[i];
  }
  EXPECT_EQ(e.block_containing(e.exec_at(0x0fff)), nullptr);
  EXPECT_EQ(e.block_containing(e.exec_at(0x1000)), bs[0]);
  EXPECT_EQ(e.block_containing(e.exec_at(0x103f)), bs[0]);
  EXPECT_EQ(e.block_containing(e.exec_at(0x1040)), bs[1]);
  EXPECT_EQ(e.block_containing(e.exec_at(0x105f)), bs[1]);
  EXPECT_EQ(e.block_containing(e.exec_at(0x1060)), nullptr);
  EXPECT_EQ(e.block_containing(e.exec_at(0x110f)), bs[2]);
  EXPECT_EQ(e.block_containing(e.exec_at(0x1110)), nullptr);
}

TEST_F(EpochTest, TheTwoEpochsSplitTheCache) {
  const Epoch &a = g_engine.epochs[0], &b = g_engine.epochs[1];
  EXPECT_EQ(a.code_exec, kCodeExec);
  EXPECT_EQ(b.code_exec, kCodeExec + a.code_size);
  EXPECT_EQ(a.code_write + a.code_size, b.code_write);
  EXPECT_FALSE(a.arena.contains(b.arena.at(0)));
  EXPECT_EQ(a.state, EpochState::kActive);
  EXPECT_EQ(b.state, EpochState::kFree);
}

// Seen from inside kjit_os_quiesce: the epoch being waited for.
EpochState g_state_during_quiesce[2];
void record_states(uint64_t, uint64_t) {
  for (const Epoch &e : g_engine.epochs) g_state_during_quiesce[e.index] = e.state;
}

TEST_F(EpochTest, FlushRetiresThenQuiescesThenFrees) {
  test_shim_on_quiesce(&record_states);
  kjit_engine_flush();
  // Translation moved to the other half.
  EXPECT_EQ(g_engine.current, 1);
  EXPECT_EQ(g_engine.epochs[1].state, EpochState::kActive);
  // The old half was retired while the host quiesced it, without the lock,
  // and only then freed.
  ASSERT_EQ(test_shim_quiesces().size(), 1u);
  const ShimQuiesce &q = test_shim_quiesces()[0];
  EXPECT_EQ(q.lo, g_engine.epochs[0].code_exec);
  EXPECT_EQ(q.hi, g_engine.epochs[0].code_exec + g_engine.epochs[0].code_size);
  EXPECT_EQ(q.lock_depth, 0);
  EXPECT_EQ(g_state_during_quiesce[0], EpochState::kRetired);
  EXPECT_EQ(g_state_during_quiesce[1], EpochState::kActive);
  EXPECT_EQ(g_engine.epochs[0].state, EpochState::kFree);
  EXPECT_EQ(kjit_engine_reclaim_pending(), 0);
  EXPECT_EQ(stats().flushes, 1u);
  // A second flush goes back to the first half, which is reset for reuse.
  kjit_engine_flush();
  EXPECT_EQ(g_engine.current, 0);
  EXPECT_EQ(g_engine.epochs[1].state, EpochState::kFree);
  EXPECT_EQ(stats().flushes, 2u);
}

TEST_F(EpochTest, FullCacheRetiresAndDeclinesUntilReclaimed) {
  // A one-instruction block that jumps to the next one: each costs a few
  // dozen bytes of cache, so a long enough run fills a half.
  std::vector<uint8_t> code;
  for (int i = 0; i < 4000; i++) code.insert(code.end(), {0xeb, 0x00});  // jmp next
  test_shim_add_code(kText, code);
  uint64_t pc = kText;
  // Build blocks one by one until the first half is full.
  while (stats().cache_full == 0 && pc < kText + code.size()) kjit_engine_enter(pc), pc += 2;
  ASSERT_EQ(stats().cache_full, 1u);
  EXPECT_EQ(g_engine.current, 1);
  EXPECT_EQ(g_engine.epochs[0].state, EpochState::kRetired);
  EXPECT_EQ(kjit_engine_reclaim_pending(), 1);
  EXPECT_TRUE(test_shim_quiesces().empty());  // the host reclaims, not the engine
  // The block that did not fit was built in the new half.
  EXPECT_NE(active().table.find(pc - 2), nullptr);
  // Fill the second half too: with the first still retired, the engine
  // declines (native execution) instead of failing.
  uint64_t fallbacks = stats().fallbacks;
  uint64_t got = 0;
  while (stats().cache_full == 1 && pc < kText + code.size()) got = kjit_engine_enter(pc), pc += 2;
  ASSERT_EQ(stats().cache_full, 2u);
  EXPECT_EQ(got, pc - 2);  // the original address: run natively
  EXPECT_EQ(stats().fallbacks, fallbacks + 1);
  EXPECT_EQ(g_engine.current, 1);
  // Reclaiming frees the retired half; the next full cache switches again.
  kjit_engine_reclaim();
  EXPECT_EQ(g_engine.epochs[0].state, EpochState::kFree);
  EXPECT_EQ(kjit_engine_reclaim_pending(), 0);
  ASSERT_EQ(test_shim_quiesces().size(), 1u);
  EXPECT_EQ(test_shim_quiesces()[0].lo, g_engine.epochs[0].code_exec);
  uint64_t again = kjit_engine_enter(pc - 2);
  EXPECT_EQ(g_engine.current, 0);
  EXPECT_TRUE(g_engine.epochs[0].contains_exec(again));
}

}  // namespace
}  // namespace kjit
