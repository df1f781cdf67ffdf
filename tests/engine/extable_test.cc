// SPDX-License-Identifier: GPL-2.0
// User accesses the engine copies (exception-table sites): the host mirrors
// each copy's entry, and a fault there continues at an exit toward the
// translation of the original fixup; a host that cannot mirror now makes
// the engine decline the block this once, one that never can makes it end
// the block before the site.
#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

class ExtableTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    // kText:      mov eax, [rdi] ; ret          (the site: a user read)
    // kText+0x10: mov eax, -14 ; ret            (its fixup)
    // kText+0x20: nop ; mov eax, [rdi] ; ret    (a site after another insn)
    std::vector<uint8_t> code(0x40, 0xcc);
    const uint8_t site[] = {0x8b, 0x07, 0xc3}, fixup[] = {0xb8, 0xf2, 0xff, 0xff, 0xff, 0xc3},
                  later[] = {0x90, 0x8b, 0x07, 0xc3};
    memcpy(&code[0], site, sizeof(site));
    memcpy(&code[0x10], fixup, sizeof(fixup));
    memcpy(&code[0x20], later, sizeof(later));
    test_shim_add_code(kText, code);
  }
};

TEST_F(ExtableTest, AFaultContinuesAtTheFixupsTranslation) {
  test_shim_add_extable(kText, kText + 0x10, 1);
  uint64_t exec = kjit_engine_enter(kText);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  ASSERT_EQ(test_shim_mirrors().size(), 1u);
  const ShimMirror m = test_shim_mirrors()[0];
  EXPECT_EQ(m.site, kText);
  EXPECT_EQ(m.copy, exec);  // the site is the block's first instruction
  ASSERT_TRUE(active().contains_exec(m.fixup));
  // The mirror's fixup is an exit: its stub calls the direct gate, which
  // serves (and links) the fixup's translation.
  uint64_t stub = branch_target(m.fixup);
  EXPECT_EQ(branch_target(stub), test::kGateDirect);
  uint64_t dest = kjit_engine_direct_exit(stub + 5);
  EXPECT_EQ(dest, active().table.find(kText + 0x10)->exec);
  EXPECT_EQ(branch_target(m.fixup), dest);
}

TEST_F(ExtableTest, WithoutAKnownFixupTheOriginalOneIsKept) {
  test_shim_add_extable(kText, 0, 1);
  ASSERT_TRUE(kjit_engine_is_cache_address(kjit_engine_enter(kText)));
  ASSERT_EQ(test_shim_mirrors().size(), 1u);
  EXPECT_EQ(test_shim_mirrors()[0].fixup, 0u);
}

TEST_F(ExtableTest, NotNowDeclinesTheBlockOnceWithoutCuttingIt) {
  test_shim_add_extable(kText + 0x21, kText + 0x10, -1);
  EXPECT_EQ(kjit_engine_enter(kText + 0x20), kText + 0x20);  // declined, not built
  EXPECT_EQ(active().table.find(kText + 0x20), nullptr);
  test_shim_set_mirror_answer(kText + 0x21, 1);
  uint64_t exec = kjit_engine_enter(kText + 0x20);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  const Block *b = active().table.find(kText + 0x20);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->ended_early);  // the site is in the block
  EXPECT_EQ(kjit_engine_original_pc(test_shim_mirrors().back().copy), kText + 0x21);
}

TEST_F(ExtableTest, NeverEndsTheBlockBeforeTheSite) {
  test_shim_add_extable(kText + 0x21, kText + 0x10, 0);
  uint64_t exec = kjit_engine_enter(kText + 0x20);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  const Block *b = active().table.find(kText + 0x20);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->ended_early);
  // Nothing is copied (the nop before the site has nothing to copy): the
  // block counts its departure and jumps to the site, natively.
  EXPECT_EQ(b->npcmap, 0u);
  uint64_t at = exec;
  x86::Insn in = decode(at);
  for (int i = 0; i < 4 && in.cf != KJIT_CF_JMP; i++) in = decode(at += in.length);
  EXPECT_EQ(in.cf, KJIT_CF_JMP);
  EXPECT_EQ(in.target, kText + 0x21);
}

TEST_F(ExtableTest, ManySitesInOneBlockAreMirroredInAddressOrder) {
  // Six user reads in a row (mov eax, [rdi]), all with a fixup: the first
  // four continue at the fixup's translation, the others at the original
  // fixup; the host sees the requests in ascending copy order, the order
  // its per-half table can append in place.
  std::vector<uint8_t> code;
  for (int i = 0; i < 6; i++) code.insert(code.end(), {0x8b, 0x07});
  code.push_back(0xc3);
  test_shim_add_code(kText + 0x100, code);
  for (int i = 0; i < 6; i++) test_shim_add_extable(kText + 0x100 + 2 * i, kText + 0x10, 1);
  uint64_t exec = kjit_engine_enter(kText + 0x100);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  const Block *b = active().table.find(kText + 0x100);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->ended_early);
  const std::vector<ShimMirror> &m = test_shim_mirrors();
  ASSERT_EQ(m.size(), 6u);
  for (size_t i = 0; i < m.size(); i++) {
    EXPECT_EQ(m[i].site, kText + 0x100 + 2 * i);
    if (i) {
      EXPECT_GT(m[i].copy, m[i - 1].copy);
    }
    if (i < 4) {
      EXPECT_TRUE(active().contains_exec(m[i].fixup));
    } else {
      EXPECT_EQ(m[i].fixup, 0u);
    }
  }
}

}  // namespace
}  // namespace kjit
