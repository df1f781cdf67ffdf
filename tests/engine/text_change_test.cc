// SPDX-License-Identifier: GPL-2.0
// The cache beside other tools (include/kjit/os_shim.h kjit_os_is_text,
// kjit_engine_retire): a branch into another tool's code is never copied or
// linked, it runs natively at its own address; a text change retires every
// translation at once.
#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kGateDirect;
using test::kGateIndirect;
using test::kText;

// Another tool's trampoline: outside kernel text, freed when the tool goes.
constexpr uint64_t kTrampoline = 0xffffffffa0001000ull;

class TextChangeTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    // kText:       call kTrampoline (a hooked fentry site) ; mov eax, 1 ; ret
    // kText+0x40:  xor eax, eax ; call kText ; ret
    // kText+0x80:  mov eax, 2 ; ret
    std::vector<uint8_t> code(0x100, 0xcc);
    const uint8_t f[] = {0xe8, 0, 0, 0, 0, 0xb8, 0x01, 0, 0, 0, 0xc3};
    memcpy(&code[0], f, sizeof(f));
    put_rel32(code, 1, 5, kTrampoline);
    const uint8_t g[] = {0x31, 0xc0, 0xe8, 0, 0, 0, 0, 0xc3};
    memcpy(&code[0x40], g, sizeof(g));
    put_rel32(code, 0x43, 0x47, kText);
    const uint8_t h[] = {0xb8, 0x02, 0, 0, 0, 0xc3};
    memcpy(&code[0x80], h, sizeof(h));
    test_shim_add_code(kText, code);
    test_shim_add_foreign(kTrampoline, kTrampoline + 0x1000);
  }
  // The rel32 at code[at] so that the instruction ending at code[end] goes to `to`.
  static void put_rel32(std::vector<uint8_t> &code, uint32_t at, uint32_t end, uint64_t to) {
    int32_t rel = static_cast<int32_t>(to - (kText + end));
    memcpy(&code[at], &rel, 4);
  }
  static kjit_engine_departures counts() {
    kjit_engine_departures d;
    kjit_engine_get_departures(&d);
    return d;
  }
  // Every rel32 branch the cache holds, within [lo, hi): none may go there.
  void expect_no_branch_into(uint64_t lo, uint64_t hi) {
    Epoch &e = active();
    for (uint32_t off = 0; off + 5 <= e.code_used; off++) {
      const uint8_t *p = e.write_at(off);
      int32_t rel;
      if (p[0] == 0xe8 || p[0] == 0xe9) {
        memcpy(&rel, p + 1, 4);
        uint64_t to = e.exec_at(off) + 5 + static_cast<int64_t>(rel);
        EXPECT_FALSE(to >= lo && to < hi) << "rel32 branch at cache+0x" << std::hex << off << " to 0x" << to;
      }
    }
  }
};

TEST_F(TextChangeTest, AHookedCallRunsNativelyAtItsOwnAddress) {
  // The entry's first instruction is the hooked call: nothing to translate.
  EXPECT_EQ(kjit_engine_enter(kText), kText);
  // Reached from translated code: the call leaves the cache at the call
  // itself (kText), not at the trampoline, and counts why.
  uint64_t exec = kjit_engine_enter(kText + 0x40);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  auto emu = emulator_with_data();
  emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
  sim::RunResult r = emu->run(exec, kGateDirect, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  uint64_t stub_return = 0;
  emu->read(emu->gpr(KJIT_REG_RSP), &stub_return, 8);
  EXPECT_EQ(kjit_engine_direct_exit(stub_return), kText);
  EXPECT_EQ(counts().count[KJIT_DEPART_HOOKED], 1u);
  // Not linked: a second run reaches the gate again (the hook may go away,
  // and then the function is translated).
  EXPECT_EQ(kjit_engine_direct_exit(stub_return), kText);
  EXPECT_EQ(counts().count[KJIT_DEPART_HOOKED], 2u);
  expect_no_branch_into(kTrampoline, kTrampoline + 0x1000);
}

TEST_F(TextChangeTest, AHookedCallInsideABlockEndsItBeforeTheCall) {
  // kText+0x200: mov eax, 3 ; call kTrampoline ; ret
  std::vector<uint8_t> code = {0xb8, 0x03, 0, 0, 0, 0xe8, 0, 0, 0, 0, 0xc3};
  int32_t rel = static_cast<int32_t>(kTrampoline - (kText + 0x20a));
  memcpy(&code[6], &rel, 4);
  test_shim_add_code(kText + 0x200, code);
  uint64_t exec = kjit_engine_enter(kText + 0x200);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  auto emu = emulator_with_data();
  const uint64_t sp = kStackTop - 0x100;
  emu->set_gpr(KJIT_REG_RSP, sp);
  sim::RunResult r = emu->run(exec, kText + 0x205, 200);  // the call's own address
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RAX), 3u);
  EXPECT_EQ(emu->gpr(KJIT_REG_RSP), sp);  // nothing pushed: the call runs natively
  EXPECT_EQ(counts().count[KJIT_DEPART_HOOKED], 1u);
  expect_no_branch_into(kTrampoline, kTrampoline + 0x1000);
}

TEST_F(TextChangeTest, AnIndirectBranchToAnotherToolsCodeIsNeverLinked) {
  // kText+0x300: jmp rax
  test_shim_add_code(kText + 0x300, {0xff, 0xe0});
  uint64_t exec = kjit_engine_enter(kText + 0x300);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  auto emu = emulator_with_data();
  emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
  emu->set_gpr(KJIT_REG_RAX, kTrampoline);
  sim::RunResult r = emu->run(exec, kGateIndirect, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  uint64_t stub_return = 0;
  emu->read(emu->gpr(KJIT_REG_RSP), &stub_return, 8);
  uint64_t links = stats().chain_links;
  EXPECT_EQ(kjit_engine_indirect_miss(stub_return, kTrampoline), kTrampoline);
  EXPECT_EQ(stats().chain_links, links);
  expect_no_branch_into(kTrampoline, kTrampoline + 0x1000);
}

TEST_F(TextChangeTest, RetireMakesEveryLaterEntryTranslateAgain) {
  uint64_t before = kjit_engine_enter(kText + 0x80);
  ASSERT_TRUE(kjit_engine_is_cache_address(before));
  EXPECT_EQ(kjit_engine_enter(kText + 0x80), before);  // the lock-free path
  EXPECT_EQ(kjit_engine_retire(), 1);
  EXPECT_EQ(kjit_engine_retire(), 0);  // nothing new to retire
  uint64_t after = kjit_engine_enter(kText + 0x80);
  ASSERT_TRUE(kjit_engine_is_cache_address(after));
  EXPECT_NE(after, before);
  EXPECT_EQ(kjit_engine_reclaim_pending(), 1);
  kjit_engine_reclaim();
  EXPECT_EQ(kjit_engine_reclaim_pending(), 0);
}

TEST_F(TextChangeTest, TwoRetiresBeforeAReclaimStartANewGenerationInTheActiveHalf) {
  ASSERT_TRUE(kjit_engine_is_cache_address(kjit_engine_enter(kText + 0x80)));
  EXPECT_EQ(kjit_engine_retire(), 1);
  uint64_t second = kjit_engine_enter(kText + 0x80);
  ASSERT_TRUE(kjit_engine_is_cache_address(second));
  uint64_t old_caller = kjit_engine_enter(kText + 0x40);
  ASSERT_TRUE(kjit_engine_is_cache_address(old_caller));
  Epoch &half = active();
  ASSERT_EQ(&half, &g_engine.epochs[1]);
  const Block *old_block = half.block_containing(second);
  ASSERT_NE(old_block, nullptr);
  std::vector<uint8_t> old_bytes(half.write_at(static_cast<uint32_t>(second - half.code_exec)),
                                 half.write_at(static_cast<uint32_t>(second - half.code_exec)) + old_block->code_size);
  // The other half still waits for its reclaim: this one renews in place.
  EXPECT_EQ(kjit_engine_retire(), 1);
  EXPECT_EQ(stats().generations, 1u);
  EXPECT_EQ(kjit_engine_retire(), 0);  // nothing built since the renewal
  EXPECT_EQ(stats().generations, 1u);
  EXPECT_EQ(&active(), &half);
  EXPECT_EQ(half.state, EpochState::kActive);
  uint64_t built = stats().blocks_built;
  uint64_t third = kjit_engine_enter(kText + 0x80);
  ASSERT_TRUE(half.contains_exec(third));
  EXPECT_GT(third, second);                    // translated anew, above the old generation
  EXPECT_EQ(stats().blocks_built, built + 1);
  uint64_t fast = stats().fast_entries;
  EXPECT_EQ(kjit_engine_enter(kText + 0x80), third);  // the new IBL, lock-free
  EXPECT_EQ(stats().fast_entries, fast + 1);
  // The old generation is intact and still runs for a task inside it.
  EXPECT_EQ(0, memcmp(old_bytes.data(), half.write_at(static_cast<uint32_t>(second - half.code_exec)),
                      old_bytes.size()));
  EXPECT_EQ(half.block_containing(second), old_block);  // its pcs still map back
  auto emu = emulator_with_data();
  emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
  emu->set_gpr(KJIT_REG_RAX, 7);
  sim::RunResult r = emu->run(old_caller, kGateDirect, 200);  // xor eax, eax; then the call's exit
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RAX), 0u);
  // The reclaim frees the other half only; nothing was declined.
  kjit_engine_reclaim();
  ASSERT_EQ(test_shim_quiesces().size(), 1u);
  EXPECT_EQ(test_shim_quiesces()[0].lo, g_engine.epochs[0].code_exec);
  EXPECT_EQ(g_engine.epochs[0].state, EpochState::kFree);
  EXPECT_EQ(half.state, EpochState::kActive);
  for (uint64_t n : counts().declined_at_entry) EXPECT_EQ(n, 0u);
}

TEST_F(TextChangeTest, ARetireWithNoRoomForAGenerationTranslatesNothingUntilTheReclaim) {
  ASSERT_TRUE(kjit_engine_is_cache_address(kjit_engine_enter(kText + 0x80)));
  EXPECT_EQ(kjit_engine_retire(), 1);
  ASSERT_TRUE(kjit_engine_is_cache_address(kjit_engine_enter(kText + 0x80)));
  active().code_used = active().code_size - 256;  // no room for another IBL table
  EXPECT_EQ(kjit_engine_retire(), 1);
  EXPECT_EQ(stats().generations, 0u);
  EXPECT_EQ(kjit_engine_enter(kText + 0x80), kText + 0x80);
  EXPECT_EQ(kjit_engine_enter(kText + 0x80), kText + 0x80);  // not from the retired IBL either
  EXPECT_EQ(counts().declined_at_entry[KJIT_DEPART_CACHE_FULL], 2u);
  uint64_t built = stats().blocks_built;
  kjit_engine_reclaim();
  EXPECT_TRUE(kjit_engine_is_cache_address(kjit_engine_enter(kText + 0x80)));
  EXPECT_EQ(stats().blocks_built, built + 1);  // translated anew
}

}  // namespace
}  // namespace kjit
