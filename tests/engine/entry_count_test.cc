// SPDX-License-Identifier: GPL-2.0
// plugins/entry_count.c against the real engine: calls are counted per
// target, a re-translation after a flush adds to the same counter, and calls
// whose routine finds the table full are counted as dropped when they run.
#include <map>

#include "engine/engine_fixture.h"
#include "kjit/engine.h"
#include "kjit_examples.h"

namespace kjit {
namespace {

using test::kText;

// Three blocks of one direct call each, 0x10 apart, to kTarget + 0x10 * i.
constexpr uint64_t kTarget = kText + 0x80;

class EntryCountTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    std::vector<uint8_t> code(0x100, 0xcc);
    for (int i = 0; i < 3; i++) {
      const int32_t rel = static_cast<int32_t>((kTarget + 0x10 * i) - (kText + 0x10 * i + 5));
      code[0x10 * i] = 0xe8;
      memcpy(&code[0x10 * i + 1], &rel, 4);
    }
    test_shim_add_code(kText, code);
  }
  void TearDown() override {
    kjit_unregister_plugin(kjit_example_entry_count());
    EngineTest::TearDown();
  }
  void start(uint32_t max_routines) {
    ASSERT_EQ(kjit_entry_count_init(max_routines), 0);
    ASSERT_EQ(kjit_register_plugin(kjit_example_entry_count()), 0);
  }
  // Until the call's exit reaches the direct gate (the target is not built).
  void run(uint64_t pc) { run_to_direct_gate(pc); }
  // pc -> count of every claimed slot.
  static std::map<uint64_t, uint64_t> counts() {
    uint32_t n = 0;
    const kjit_entry_count *e = kjit_entry_count_entries(&n);
    std::map<uint64_t, uint64_t> m;
    for (uint32_t i = 0; i < n; i++) {
      if (!e[i].pc) continue;
      EXPECT_EQ(m.count(e[i].pc), 0u) << "two slots for " << std::hex << e[i].pc;
      m[e[i].pc] = e[i].count;
    }
    return m;
  }
};

TEST_F(EntryCountTest, CallsBeforeAndAfterAFlushAddToOneCounter) {
  start(8);
  run(kText);
  run(kText + 0x10);
  ASSERT_EQ(kjit_engine_flush(), 0);
  run(kText);
  EXPECT_EQ(counts(), (std::map<uint64_t, uint64_t>{{kTarget, 2}, {kTarget + 0x10, 1}}));
  EXPECT_EQ(kjit_entry_count_dropped(), 0u);
}

TEST_F(EntryCountTest, CallsThatFindTheTableFullAreDropped) {
  start(1);  // two slots
  run(kText);
  run(kText + 0x10);
  run(kText + 0x20);
  run(kText + 0x20);
  EXPECT_EQ(counts(), (std::map<uint64_t, uint64_t>{{kTarget, 1}, {kTarget + 0x10, 1}}));
  EXPECT_EQ(kjit_entry_count_dropped(), 2u);  // each run of the third call
  // Entries of an instrumented function are counted the same way.
  kjit_engine_notify_entry(kTarget);
  kjit_engine_notify_entry(kTarget + 0x40);
  EXPECT_EQ(counts()[kTarget], 2u);
  EXPECT_EQ(kjit_entry_count_dropped(), 3u);
}

TEST_F(EntryCountTest, ResetZeroesCountsAndDropped) {
  start(1);
  run(kText);
  run(kText + 0x10);
  run(kText + 0x20);
  ASSERT_EQ(kjit_entry_count_dropped(), 1u);
  kjit_entry_count_reset();
  EXPECT_EQ(counts(), (std::map<uint64_t, uint64_t>{{kTarget, 0}, {kTarget + 0x10, 0}}));
  EXPECT_EQ(kjit_entry_count_dropped(), 0u);
}

TEST_F(EntryCountTest, RejectsATableBeyondItsLimit) {
  EXPECT_EQ(kjit_entry_count_init(KJIT_ENTRY_COUNT_MAX + 1), -22);
}

}  // namespace
}  // namespace kjit
