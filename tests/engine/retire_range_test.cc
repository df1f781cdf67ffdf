// SPDX-License-Identifier: GPL-2.0
// Retiring what a text change touches and nothing else
// (kjit_engine_retire_range, core/source_deps.h): the traces that read the
// changed bytes go, with every way into them; the rest of the cache stays
// linked and found.
#include "engine/engine_fixture.h"
#include "kjit_examples.h"

namespace kjit {
namespace {

using test::kGateDirect;
using test::kGateIndirect;
using test::kText;

constexpr uint64_t kA = kText;           // xor eax, eax ; jmp kB
constexpr uint64_t kB = kText + 0x40;    // mov eax, 2 ; ret
constexpr uint64_t kC = kText + 0x1000;  // mov eax, 3 ; ret   (another page)

class RetireRangeTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    std::vector<uint8_t> code(0x1100, 0xcc);
    const uint8_t a[] = {0x31, 0xc0, 0xe9, 0, 0, 0, 0};
    memcpy(&code[0], a, sizeof(a));
    const int32_t rel = static_cast<int32_t>(kB - (kA + sizeof(a)));
    memcpy(&code[3], &rel, 4);
    const uint8_t b[] = {0xb8, 0x02, 0, 0, 0, 0xc3};
    memcpy(&code[kB - kText], b, sizeof(b));
    const uint8_t c[] = {0xb8, 0x03, 0, 0, 0, 0xc3};
    memcpy(&code[kC - kText], c, sizeof(c));
    test_shim_add_code(kText, code);
  }
  // Runs cache code from `exec` until it reaches a gate: which one, the
  // stub's return address (for the direct gate) and rax.
  struct Stop {
    uint64_t gate, stub_return, rax;
  };
  Stop run_to_gate(uint64_t exec) {
    auto emu = emulator();
    const uint64_t sp = kStackTop - 0x100, ret = kText + 0x800;  // B's ret goes there
    emu->write(sp, &ret, 8);
    emu->set_gpr(KJIT_REG_RSP, sp);
    emu->set_gpr(KJIT_REG_RAX, 0x55);
    sim::RunResult r = emu->run(exec, kGateDirect, 200);
    // The direct gate is the run's sentinel; the indirect one an int3.
    EXPECT_TRUE(r.reason == sim::StopReason::kSentinel || r.pc == kGateIndirect) << r.message;
    Stop s{r.pc, 0, emu->gpr(KJIT_REG_RAX)};
    emu->read(emu->gpr(KJIT_REG_RSP), &s.stub_return, 8);
    return s;
  }
};

TEST_F(RetireRangeTest, OnlyTheTracesThatReadTheChangedBytesAreRetired) {
  const uint64_t b = kjit_engine_enter(kB), c = kjit_engine_enter(kC), a = kjit_engine_enter(kA);
  ASSERT_TRUE(kjit_engine_is_cache_address(a) && kjit_engine_is_cache_address(b) && kjit_engine_is_cache_address(c));
  const uint64_t built = stats().blocks_built;
  // A kprobe's int3 on B's ret: only B's trace read it.
  EXPECT_EQ(kjit_engine_retire_range(kB + 5, 1), 1);
  EXPECT_EQ(stats().traces_retired, 1u);
  EXPECT_EQ(stats().blocks_retired, 1u);
  EXPECT_EQ(stats().flushes, 0u);
  EXPECT_EQ(kjit_engine_enter(kC), c);
  EXPECT_EQ(kjit_engine_enter(kA), a);
  EXPECT_EQ(stats().blocks_built, built);
  // Nothing read these bytes: nothing to retire.
  EXPECT_EQ(kjit_engine_retire_range(kText + 0x800, 16), 0);
  EXPECT_EQ(kjit_engine_retire_range(kB + 5, 1), 0);  // retired already
}

TEST_F(RetireRangeTest, ALinkedExitGoesBackToItsStubAndLinksTheNewTranslation) {
  const uint64_t b = kjit_engine_enter(kB);
  const uint64_t a = kjit_engine_enter(kA);  // its jmp is linked to b
  Stop s = run_to_gate(a);
  EXPECT_EQ(s.gate, kGateIndirect);  // through b to its ret
  EXPECT_EQ(s.rax, 2u);
  ASSERT_EQ(kjit_engine_retire_range(kB, 1), 1);
  test_shim_write_code(kB, {0xb8, 0x07, 0, 0, 0});  // mov eax, 7
  s = run_to_gate(a);
  ASSERT_EQ(s.gate, kGateDirect);  // a's exit is on its stub again
  const uint64_t b2 = kjit_engine_direct_exit(s.stub_return);
  ASSERT_TRUE(kjit_engine_is_cache_address(b2));
  EXPECT_NE(b2, b);
  s = run_to_gate(a);  // linked to the new translation
  EXPECT_EQ(s.gate, kGateIndirect);
  EXPECT_EQ(s.rax, 7u);
}

TEST_F(RetireRangeTest, LookupsLeadThroughAForwarderToTheNewTranslation) {
  const uint64_t b = kjit_engine_enter(kB);
  ASSERT_TRUE(kjit_engine_is_cache_address(b));
  ASSERT_EQ(kjit_engine_retire_range(kB, 1), 1);
  test_shim_write_code(kB, {0xb8, 0x09, 0, 0, 0});  // mov eax, 9
  // The IBL's entry for kB leads to the forwarder, which is on its stub.
  const uint64_t f = kjit_engine_enter(kB);
  ASSERT_TRUE(kjit_engine_is_cache_address(f));
  EXPECT_NE(f, b);
  Stop s = run_to_gate(f);
  ASSERT_EQ(s.gate, kGateDirect);
  const uint64_t b2 = kjit_engine_direct_exit(s.stub_return);
  ASSERT_TRUE(kjit_engine_is_cache_address(b2));
  EXPECT_NE(b2, b);
  EXPECT_EQ(kjit_engine_enter(kB), b2);  // the IBL leads to it directly now
  s = run_to_gate(f);                    // and the forwarder is linked to it
  EXPECT_EQ(s.gate, kGateIndirect);
  EXPECT_EQ(s.rax, 9u);
}

TEST_F(RetireRangeTest, AChainHitGoesThroughTheForwarder) {
  // B's ret site gets a link to C's translation (the dispatcher appends it
  // on a miss with C as the return target).
  const uint64_t b = kjit_engine_enter(kB);
  const uint64_t c = kjit_engine_enter(kC);
  auto emu = emulator();
  const uint64_t sp = kStackTop - 0x100;
  emu->write(sp, &kC, 8);  // B returns to C
  emu->set_gpr(KJIT_REG_RSP, sp);
  sim::RunResult r = emu->run(b, kGateDirect, 200);
  ASSERT_EQ(r.pc, kGateIndirect);
  uint64_t stub_return = 0;
  emu->read(emu->gpr(KJIT_REG_RSP), &stub_return, 8);
  uint64_t links = stats().chain_links;
  EXPECT_EQ(kjit_engine_indirect_miss(stub_return, kC), c);
  ASSERT_EQ(stats().chain_links, links + 1);
  // C changes: its trace is retired, B's stays, and B's link to C leads to
  // C's forwarder, which reaches the dispatcher.
  ASSERT_EQ(kjit_engine_retire_range(kC, 1), 1);
  EXPECT_EQ(kjit_engine_enter(kB), b);
  auto emu2 = emulator();
  emu2->write(sp, &kC, 8);
  emu2->set_gpr(KJIT_REG_RSP, sp);
  r = emu2->run(b, kGateDirect, 200);
  EXPECT_EQ(r.pc, kGateDirect) << "the link still jumps to C's retired translation";
}

TEST_F(RetireRangeTest, ATraceDependsOnTheCodeItsLivenessLookedAt) {
  // Counting blocks, A's build asks what is live at its jump's target kB
  // (what its counter may clobber), and D's, the same jump, gets the
  // memoised answer: both depend on kB's code.
  constexpr uint64_t kD = kText + 0x80;
  std::vector<uint8_t> d = {0x31, 0xc0, 0xe9, 0, 0, 0, 0};
  const int32_t rel = static_cast<int32_t>(kB - (kD + d.size()));
  memcpy(&d[3], &rel, 4);
  ASSERT_TRUE(test_shim_write_code(kD, d));
  // Its tables first, as the module's tool start does: registered alone,
  // the plugin would index the tables an earlier test freed.
  ASSERT_EQ(kjit_bbcount_init(64), 0);
  ASSERT_EQ(kjit_register_plugin(kjit_example_bbcount()), 0);
  const uint64_t b = kjit_engine_enter(kB), c = kjit_engine_enter(kC);
  const uint64_t a = kjit_engine_enter(kA), dd = kjit_engine_enter(kD);
  ASSERT_TRUE(kjit_engine_is_cache_address(a) && kjit_engine_is_cache_address(dd));
  ASSERT_NE(b, 0u);
  EXPECT_EQ(kjit_engine_retire_range(kB, 1), 3);  // B's, A's and D's traces
  EXPECT_EQ(kjit_engine_enter(kC), c);
  kjit_unregister_plugin(kjit_example_bbcount());
}

TEST_F(RetireRangeTest, AnExitLinkedNativelyDependsOnItsTarget) {
  // kE jumps to kLate, where nothing may be translated yet (a module's
  // text before it is live): the exit runs natively for good.  When code
  // becomes translatable there, retiring that range retires kE's trace.
  constexpr uint64_t kE = kText + 0xc0, kLate = kText + 0x2000;
  std::vector<uint8_t> e = {0x31, 0xc0, 0xe9, 0, 0, 0, 0};
  const int32_t rel = static_cast<int32_t>(kLate - (kE + e.size()));
  memcpy(&e[3], &rel, 4);
  ASSERT_TRUE(test_shim_write_code(kE, e));
  const uint64_t c = kjit_engine_enter(kC), x = kjit_engine_enter(kE);
  ASSERT_TRUE(kjit_engine_is_cache_address(x));
  test_shim_add_code(kLate, {0xb8, 0x05, 0, 0, 0, 0xc3});  // mov eax, 5 ; ret
  EXPECT_EQ(kjit_engine_retire_range(kLate, 0x1000), 1);
  EXPECT_EQ(kjit_engine_enter(kC), c);
  const uint64_t x2 = kjit_engine_enter(kE);
  ASSERT_TRUE(kjit_engine_is_cache_address(x2));
  EXPECT_NE(x2, x);
  Stop s = run_to_gate(x2);  // its exit waits for kLate's translation
  ASSERT_EQ(s.gate, kGateDirect);
  ASSERT_TRUE(kjit_engine_is_cache_address(kjit_engine_direct_exit(s.stub_return)));
  s = run_to_gate(x2);  // into kLate's translation, to its ret
  EXPECT_EQ(s.gate, kGateIndirect);
  EXPECT_EQ(s.rax, 5u);
}

TEST_F(RetireRangeTest, WithNoRoomForAForwarderItAsksForAWholeRetire) {
  const uint64_t b = kjit_engine_enter(kB);
  ASSERT_TRUE(kjit_engine_is_cache_address(b));
  active().code_used = active().code_size - 4;
  EXPECT_EQ(kjit_engine_retire_range(kB, 1), -1);
}

}  // namespace
}  // namespace kjit
