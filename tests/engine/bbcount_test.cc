// SPDX-License-Identifier: GPL-2.0
// plugins/bbcount.c against the real engine: its counters are keyed by the
// block's original address (a rebuild after a flush keeps its counter), and
// blocks that find the table full are counted as dropped, never silently.
#include "engine/engine_fixture.h"
#include "core/engine_state.h"
#include "kjit/engine.h"
#include "kjit_examples.h"

namespace kjit {
namespace {

using test::kText;

class BbcountTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    // Three blocks that end in a conditional branch (jz +0x10), 0x20 apart.
    std::vector<uint8_t> code(0x100, 0xcc);
    for (int i = 0; i < 3; i++) code[0x20 * i] = 0x74, code[0x20 * i + 1] = 0x10;
    test_shim_add_code(kText, code);
  }
  void TearDown() override {
    kjit_unregister_plugin(kjit_example_bbcount());
    EngineTest::TearDown();
  }
  void start(uint32_t max_blocks) {
    ASSERT_EQ(kjit_bbcount_init(max_blocks), 0);
    ASSERT_EQ(kjit_register_plugin(kjit_example_bbcount()), 0);
  }
  static void build(uint64_t pc) {
    uint64_t succ[4];
    uint32_t nsucc = 0, ninsns = 0;
    ASSERT_EQ(kjit_engine_build_only(pc, succ, &nsucc, &ninsns), 0);
  }
  // The inserted increments hit the data window.
  void run(uint64_t pc) { run_to_direct_gate(pc); }
  static uint64_t count_of(uint64_t pc) {
    uint64_t c = 0;
    for (uint32_t i = 0; i < kjit_bbcount_blocks(); i++)
      c += kjit_bbcount_pc(i) == pc ? kjit_bbcount_count(i) : 0;
    return c;
  }
  static std::vector<uint64_t> pcs() {
    std::vector<uint64_t> v;
    for (uint32_t i = 0; i < kjit_bbcount_blocks(); i++) v.push_back(kjit_bbcount_pc(i));
    return v;
  }
};

TEST_F(BbcountTest, RebuildAfterFlushKeepsItsEntry) {
  start(8);
  build(kText);
  build(kText + 0x20);
  ASSERT_EQ(kjit_engine_flush(), 0);
  build(kText);
  build(kText + 0x20);
  EXPECT_EQ(pcs(), (std::vector<uint64_t>{kText, kText + 0x20}));
  EXPECT_EQ(kjit_bbcount_dropped(), 0u);
}

TEST_F(BbcountTest, RunsBeforeAndAfterAFlushAddToOneCounter) {
  start(8);
  run(kText);
  run(kText);
  EXPECT_EQ(count_of(kText), 2u);
  ASSERT_EQ(kjit_engine_flush(), 0);
  run(kText);  // a new translation, at another cache address
  EXPECT_EQ(pcs(), std::vector<uint64_t>{kText});
  EXPECT_EQ(count_of(kText), 3u);
  EXPECT_EQ(kjit_bbcount_total(), 3u);
  EXPECT_EQ(kjit_bbcount_dropped(), 0u);
}

TEST_F(BbcountTest, BlocksThatFindTheTableFullRunInTheTotalOnly) {
  start(1);
  run(kText);
  run(kText + 0x20);
  run(kText + 0x20);
  EXPECT_EQ(pcs(), std::vector<uint64_t>{kText});
  EXPECT_EQ(count_of(kText), 1u);
  EXPECT_EQ(kjit_bbcount_total(), 3u);
  EXPECT_EQ(kjit_bbcount_dropped(), 1u);  // one translation without a counter
}

TEST_F(BbcountTest, FullTableCountsDroppedBlocks) {
  start(1);
  build(kText);
  build(kText + 0x20);
  build(kText + 0x40);
  EXPECT_EQ(pcs(), std::vector<uint64_t>{kText});
  EXPECT_EQ(kjit_bbcount_dropped(), 2u);
  // The block with an entry keeps it after a flush; the others are dropped
  // again when rebuilt (each build without a counter counts).
  ASSERT_EQ(kjit_engine_flush(), 0);
  build(kText);
  build(kText + 0x20);
  EXPECT_EQ(pcs(), std::vector<uint64_t>{kText});
  EXPECT_EQ(kjit_bbcount_dropped(), 3u);
}

TEST_F(BbcountTest, NoTableDropsEveryBlock) {
  start(0);
  build(kText);
  EXPECT_TRUE(pcs().empty());
  EXPECT_EQ(kjit_bbcount_dropped(), 1u);
}

TEST_F(BbcountTest, ManyBlocksFindTheirOwnEntries) {
  // More keys than probes collide in a small index: every lookup must still
  // find its own entry (64 blocks, 0x4 apart, into a table of 64).
  std::vector<uint8_t> code(0x100, 0xcc);
  for (int i = 0; i < 64; i++) code[4 * i] = 0x74, code[4 * i + 1] = 0x02;
  test_shim_add_code(kText + 0x1000, code);
  start(64);
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 64; i++) build(kText + 0x1000 + 4 * i);
    ASSERT_EQ(kjit_engine_flush(), 0);
  }
  std::vector<uint64_t> v = pcs();
  ASSERT_EQ(v.size(), 64u);
  for (int i = 0; i < 64; i++) EXPECT_EQ(v[i], kText + 0x1000 + 4 * i);
  EXPECT_EQ(kjit_bbcount_dropped(), 0u);
}

TEST_F(BbcountTest, EntriesKnowTheirBlockLengthAndInstructions) {
  start(8);
  run(kText);  // jz +0x10: one instruction, two bytes
  ASSERT_EQ(kjit_bbcount_blocks(), 1u);
  EXPECT_EQ(kjit_bbcount_len(0), 2u);
  EXPECT_EQ(kjit_bbcount_ninsn(0), 1u);
  EXPECT_FALSE(kjit_bbcount_is_fragment(0));
}

// A block the engine cuts (here at 2 instructions) is a fragment with a
// counter of its own, outside the total: every executed instruction lies in
// some counted block, and the sum of count x ninsn is the instruction count.
TEST_F(BbcountTest, BlocksCutByTheEngineAreCountedAsFragments) {
  ASSERT_EQ(init([](kjit_engine_options *o) { o->max_block_insns = 2; }), 0);  // resets the shim's code
  std::vector<uint8_t> code(0x40, 0xcc);  // nop nop nop jz +0x10, in mapped int3s
  const uint8_t insns[] = {0x90, 0x90, 0x90, 0x74, 0x10};
  std::copy(insns, insns + sizeof insns, code.begin());
  test_shim_add_code(kText + 0x2000, code);
  start(8);
  run(kText + 0x2000);      // the fragment nop nop, then nop jz laid out after it
  run(kText + 0x2002);      // nop jz: a whole block
  ASSERT_EQ(pcs(), (std::vector<uint64_t>{kText + 0x2000, kText + 0x2002}));
  EXPECT_TRUE(kjit_bbcount_is_fragment(0));
  EXPECT_EQ(kjit_bbcount_len(0), 2u);
  EXPECT_EQ(kjit_bbcount_ninsn(0), 2u);
  EXPECT_FALSE(kjit_bbcount_is_fragment(1));
  EXPECT_EQ(kjit_bbcount_len(1), 3u);
  EXPECT_EQ(count_of(kText + 0x2000), 1u);
  EXPECT_EQ(count_of(kText + 0x2002), 2u);
  EXPECT_EQ(kjit_bbcount_total(), 2u);  // whole blocks only
}

// The total is the sum of the whole blocks' counters.  A start built as a
// fragment once and whole later (here the block size limit changes between
// the builds) keeps the entry of its first build: the whole translation's
// runs still count in the total, the fragment's do not.
TEST_F(BbcountTest, ATotalStaysExactWhenAStartIsBuiltAsAFragmentAndWhole) {
  ASSERT_EQ(init([](kjit_engine_options *o) { o->max_block_insns = 2; }), 0);
  std::vector<uint8_t> code(0x40, 0xcc);  // nop nop nop jz +0x10
  const uint8_t insns[] = {0x90, 0x90, 0x90, 0x74, 0x10};
  std::copy(insns, insns + sizeof insns, code.begin());
  test_shim_add_code(kText + 0x2000, code);
  start(8);
  run(kText + 0x2000);  // the fragment nop nop, then the whole nop jz
  EXPECT_EQ(kjit_bbcount_total(), 1u);
  ASSERT_EQ(kjit_engine_flush(), 0);
  g_engine.opt.max_block_insns = 4;
  run(kText + 0x2000);  // nop nop nop jz, whole, in the fragment's entry
  run(kText + 0x2000);
  ASSERT_TRUE(kjit_bbcount_is_fragment(0));
  EXPECT_EQ(count_of(kText + 0x2000), 3u);
  EXPECT_EQ(kjit_bbcount_total(), 3u);
  // and the other way round: whole first, then a fragment
  ASSERT_EQ(kjit_engine_flush(), 0);
  g_engine.opt.max_block_insns = 1;
  run(kText + 0x2002);  // the fragment nop, in nop jz's whole entry, then the whole jz
  ASSERT_FALSE(kjit_bbcount_is_fragment(1));
  EXPECT_EQ(count_of(kText + 0x2002), 2u);
  EXPECT_EQ(count_of(kText + 0x2003), 1u);
  EXPECT_EQ(kjit_bbcount_total(), 4u);
}

TEST_F(BbcountTest, ClearZeroesTheCountsAndTheTotal) {
  start(1);
  run(kText);
  run(kText + 0x20);  // no entry: in the total only
  EXPECT_EQ(kjit_bbcount_total(), 2u);
  kjit_bbcount_clear();
  EXPECT_EQ(kjit_bbcount_total(), 0u);
  EXPECT_EQ(count_of(kText), 0u);
  run(kText + 0x20);
  EXPECT_EQ(kjit_bbcount_total(), 1u);
}

}  // namespace
}  // namespace kjit
