// SPDX-License-Identifier: GPL-2.0
// Which bytes gdb may read of a replay, and from when
// (tools/kjit-sim/known_memory.h): the first range to make a byte known
// decides when.
#include "known_memory.h"

#include <gtest/gtest.h>

namespace kjit::sim {
namespace {

TEST(KnownMemory, EarliestRangeWinsAndPrefixesStopAtTheUnknown) {
  KnownMemory k;
  k.add(0x1000, 0x10, 0);   // [0x1000, 0x1010) from the start
  k.add(0x1008, 0x10, 5);   // only [0x1010, 0x1018) is new: from 5
  k.add(0x1020, 0x8, 9);    // a gap at [0x1018, 0x1020)
  EXPECT_EQ(k.known_prefix(0x1000, 0x40, 0), 0x10u);
  EXPECT_EQ(k.known_prefix(0x1000, 0x40, 5), 0x18u);
  EXPECT_EQ(k.known_prefix(0x1008, 4, 0), 4u);   // the early part keeps position 0
  EXPECT_EQ(k.known_prefix(0x1010, 8, 4), 0u);
  EXPECT_EQ(k.known_prefix(0x1018, 8, 100), 0u);
  EXPECT_EQ(k.known_prefix(0x1020, 0x100, 9), 8u);
  EXPECT_EQ(k.unknown_prefix(0x0ff0, 0x100, 0), 0x10u);   // up to the first known byte
  EXPECT_EQ(k.unknown_prefix(0x1010, 0x100, 4), 0x100u);  // known later, the gap, known later, nothing
  EXPECT_EQ(k.unknown_prefix(0x1010, 0x100, 5), 0u);
  EXPECT_EQ(k.unknown_prefix(0x1018, 0x100, 9), 8u);
  EXPECT_EQ(k.unknown_prefix(0x2000, 0x100, 9), 0x100u);
}

TEST(KnownMemory, RangesAtTheTopOfTheAddressSpace) {
  KnownMemory k;
  k.add(~uint64_t{0} - 7, 100, 0);  // clipped at the end
  EXPECT_EQ(k.known_prefix(~uint64_t{0} - 7, 100, 0), 7u);
  EXPECT_EQ(k.unknown_prefix(~uint64_t{0} - 20, 100, 0), 13u);
}

}  // namespace
}  // namespace kjit::sim
