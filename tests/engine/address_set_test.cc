// SPDX-License-Identifier: GPL-2.0
// The stop-address set: every inserted address is found, absent ones are
// not, and a full set refuses instead of overwriting.
#include "core/address_set.h"

#include <gtest/gtest.h>

#include <memory>

namespace {

using SmallSet = kjit::AddressSet<4>;  // 16 slots, 12 addresses

TEST(AddressSet, FindsWhatWasInsertedAndNothingElse) {
  auto s = std::make_unique<kjit::AddressSet<12>>();
  // Kernel return addresses: close together, so they share high bits.
  for (uint64_t i = 0; i < 3000; i++) ASSERT_TRUE(s->insert(0xffffffff81000000ull + i * 7)) << i;
  EXPECT_EQ(s->size(), 3000u);
  for (uint64_t i = 0; i < 3000; i++) EXPECT_TRUE(s->contains(0xffffffff81000000ull + i * 7)) << i;
  for (uint64_t i = 0; i < 3000; i++) EXPECT_FALSE(s->contains(0xffffffff81000000ull + i * 7 + 1)) << i;
}

TEST(AddressSet, InsertingTwiceKeepsOneEntry) {
  auto s = std::make_unique<SmallSet>();
  EXPECT_TRUE(s->insert(0x1234));
  EXPECT_TRUE(s->insert(0x1234));
  EXPECT_EQ(s->size(), 1u);
}

TEST(AddressSet, FullSetRefusesNewAddressesButKeepsOldOnes) {
  auto s = std::make_unique<SmallSet>();
  for (uint64_t i = 1; i <= SmallSet::kCapacity; i++) ASSERT_TRUE(s->insert(i << 12));
  EXPECT_FALSE(s->insert(0xdead000));
  EXPECT_FALSE(s->contains(0xdead000));
  EXPECT_TRUE(s->insert(3 << 12));  // already there
  for (uint64_t i = 1; i <= SmallSet::kCapacity; i++) EXPECT_TRUE(s->contains(i << 12));
}

TEST(AddressSet, ZeroIsNeverAMember) {
  auto s = std::make_unique<SmallSet>();
  EXPECT_FALSE(s->insert(0));
  EXPECT_FALSE(s->contains(0));
}

}  // namespace
