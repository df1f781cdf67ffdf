// SPDX-License-Identifier: GPL-2.0
// The block table: original address -> block, open addressing with linear
// probing, a load limit, and a reset that forgets everything.
#include "core/block_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace kjit {
namespace {

constexpr uint64_t kPc = 0xffffffff81000000ull;

// A table of `capacity` slots in its own arena.
struct Table {
  explicit Table(uint32_t capacity) : mem(64 * 1024) {
    arena.init(mem.data(), mem.size());
    EXPECT_TRUE(table.init(&arena, capacity));
  }
  std::vector<uint8_t> mem;
  Arena arena;
  BlockTable table;
};

// Slot index of `pc` in table `t`.
uint32_t index_of(Table &t, uint64_t pc) {
  // The table is the arena's first allocation.
  return static_cast<uint32_t>(t.table.slot(pc) - reinterpret_cast<TableSlot *>(t.mem.data()));
}

// Where `pc` lands in an empty table of `capacity` slots: its home slot.
uint32_t home(uint64_t pc, uint32_t capacity) {
  Table t(capacity);
  return index_of(t, pc);
}

TEST(BlockTable, InsertThenFindReturnsTheBlock) {
  Table t(64);
  Block a{}, b{};
  t.table.slot(kPc)->block = &a;
  t.table.slot(kPc + 16)->block = &b;
  EXPECT_EQ(t.table.find(kPc), &a);
  EXPECT_EQ(t.table.find(kPc + 16), &b);
  EXPECT_EQ(t.table.find(kPc + 32), nullptr);
  EXPECT_EQ(t.table.used(), 2u);
}

TEST(BlockTable, SlotOfAKnownPcIsTheSameSlot) {
  Table t(64);
  TableSlot *s = t.table.slot(kPc);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->pc, kPc);
  EXPECT_EQ(t.table.slot(kPc), s);
  EXPECT_EQ(t.table.used(), 1u);  // not counted twice
}

TEST(BlockTable, ASlotWithoutABlockIsNotFound) {
  // Exits wait in the slot of a target that is not built yet.
  Table t(64);
  ASSERT_NE(t.table.slot(kPc), nullptr);
  EXPECT_EQ(t.table.find(kPc), nullptr);
}

TEST(BlockTable, CollidingPcsProbeToTheNextSlot) {
  constexpr uint32_t kCap = 16;
  // Two pcs with the same home slot, and a third one too (never inserted).
  const uint32_t h = home(kPc, kCap);
  std::vector<uint64_t> same;
  for (uint64_t pc = kPc + 1; same.size() < 2; pc++)
    if (home(pc, kCap) == h) same.push_back(pc);
  Table t(kCap);
  Block a{}, b{};
  ASSERT_EQ(index_of(t, kPc), h);
  EXPECT_EQ(index_of(t, same[0]), (h + 1) % kCap);
  TableSlot *sa = t.table.slot(kPc);
  TableSlot *sb = t.table.slot(same[0]);
  sa->block = &a;
  sb->block = &b;
  EXPECT_EQ(t.table.find(kPc), &a);
  EXPECT_EQ(t.table.find(same[0]), &b);
  // The probe for an absent pc with the same home stops at the first empty slot.
  EXPECT_EQ(t.table.find(same[1]), nullptr);
}

TEST(BlockTable, FullAtThreeQuartersLoad) {
  Table t(16);
  for (uint64_t i = 0; i < 12; i++) ASSERT_NE(t.table.slot(kPc + i * 8), nullptr) << i;
  EXPECT_EQ(t.table.slot(kPc + 12 * 8), nullptr);  // the 13th key
  EXPECT_EQ(t.table.used(), 12u);
  // Known keys are still served when full.
  EXPECT_NE(t.table.slot(kPc), nullptr);
  EXPECT_EQ(t.table.slot(kPc)->pc, kPc);
}

TEST(BlockTable, CapacityRoundsDownToAPowerOfTwo) {
  Table t(24);  // 16 slots: 12 keys
  for (uint64_t i = 0; i < 12; i++) ASSERT_NE(t.table.slot(kPc + i * 8), nullptr) << i;
  EXPECT_EQ(t.table.slot(kPc + 12 * 8), nullptr);
}

TEST(BlockTable, InitOnAFullArenaFails) {
  std::vector<uint8_t> mem(64);
  Arena arena;
  arena.init(mem.data(), mem.size());
  BlockTable table;
  EXPECT_FALSE(table.init(&arena, 64));
}

TEST(BlockTable, InitForgetsEverything) {
  Table t(16);
  Block a{};
  t.table.slot(kPc)->block = &a;
  t.arena.reset();
  ASSERT_TRUE(t.table.init(&t.arena, 16));
  EXPECT_EQ(t.table.find(kPc), nullptr);
  EXPECT_EQ(t.table.used(), 0u);
}

}  // namespace
}  // namespace kjit
