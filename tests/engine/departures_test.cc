// SPDX-License-Identifier: GPL-2.0
// How entries end (core/departures.cc): translated code that hands a task to
// native code counts why, on that path only; the dispatcher counts what it
// serves natively.  The code runs under the emulator with the data window
// mapped, so each count is the one the translated code itself added.
#include "core/departures.h"

#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

class DeparturesTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    // kText:       mov eax, 1 ; ret
    // kText+0x40:  (the caller's code after the call: a stop address)
    // kText+0x80:  cmp eax, eax ; call kText+0x1000 (no code there: never
    //              translated) ; ret
    std::vector<uint8_t> code(0x100, 0xcc);
    const uint8_t f[] = {0xb8, 0x01, 0, 0, 0, 0xc3};
    memcpy(&code[0], f, sizeof(f));
    const uint8_t g[] = {0x39, 0xc0, 0xe8, 0, 0, 0, 0, 0xc3};
    int32_t rel = static_cast<int32_t>(0x1000 - (0x80 + 7));
    memcpy(&code[0x80], g, sizeof(g));
    memcpy(&code[0x83], &rel, 4);
    test_shim_add_code(kText, code);
  }
  static kjit_engine_departures counts() {
    kjit_engine_departures d;
    kjit_engine_get_departures(&d);
    return d;
  }
  // The miss stub's return address of the `ret` site at `site_jmp`: an
  // empty chain jumps straight to its miss stub (call gate_indirect).
  uint64_t miss_stub_return(uint64_t site_jmp) {
    uint64_t stub = skip_return_swap(branch_target(return_site_tail(site_jmp)));
    EXPECT_EQ(branch_target(stub), test::kGateIndirect);
    return stub + 5;
  }
};

TEST_F(DeparturesTest, EntriesAreCountedOnlyWhenTheyGetCode) {
  EXPECT_EQ(kjit_engine_enter(kText + 0x1000), kText + 0x1000);  // declined
  EXPECT_EQ(counts().entered, 0u);
  kjit_engine_enter(kText);
  kjit_engine_enter(kText);  // the lock-free path counts too
  EXPECT_EQ(counts().entered, 2u);
  kjit_engine_reset_departures();
  EXPECT_EQ(counts().entered, 0u);
}

TEST_F(DeparturesTest, AReturnToAStopAddressIsACompletionEveryTime) {
  ASSERT_EQ(kjit_engine_add_stop_address(kText + 0x40), 0);
  uint64_t exec = kjit_engine_enter(kText);
  // First return: the dispatcher serves the stop address natively, counts.
  uint64_t dest = kjit_engine_indirect_miss(miss_stub_return(exec + 5), kText + 0x40);
  EXPECT_EQ(dest, kText + 0x40);
  EXPECT_EQ(counts().count[KJIT_DEPART_COMPLETED], 1u);
  // Later returns take the chain link, whose trampoline counts.
  auto emu = emulator_with_data();
  const uint64_t sp = test::EngineTest::kStackTop - 0x100, ret = kText + 0x40;
  for (int i = 0; i < 3; i++) {
    emu->write(sp, &ret, 8);
    emu->set_gpr(KJIT_REG_RSP, sp);
    emu->set_gpr(KJIT_REG_RCX, 0x77);
    sim::RunResult r = emu->run(exec, kText + 0x40, 200);
    ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
    EXPECT_EQ(emu->gpr(KJIT_REG_RCX), 0x77u);
    EXPECT_EQ(emu->gpr(KJIT_REG_RSP), sp + 8);
  }
  kjit_engine_departures d = counts();
  EXPECT_EQ(d.count[KJIT_DEPART_COMPLETED], 4u);
  for (int why = KJIT_DEPART_NATIVE_CALL; why < KJIT_DEPART_COUNT; why++) EXPECT_EQ(d.count[why], 0u) << why;
}

TEST_F(DeparturesTest, ACallToNativeCodeLeavesWithItsReasonAndFlagsIntact) {
  uint64_t exec = kjit_engine_enter(kText + 0x80);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  auto emu = emulator_with_data();
  const uint64_t sp = test::EngineTest::kStackTop - 0x100;
  emu->set_gpr(KJIT_REG_RSP, sp);
  sim::RunResult r = emu->run(exec, kText + 0x1000, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_TRUE(emu->rflags() & KJIT_RFLAGS_ZF);  // cmp eax, eax set it; the count kept it
  uint64_t pushed = 0;
  emu->read(sp - 8, &pushed, 8);
  EXPECT_EQ(pushed, kText + 0x87);  // the original return address, as always
  kjit_engine_departures d = counts();
  EXPECT_EQ(d.count[KJIT_DEPART_NATIVE_CALL], 1u);
  EXPECT_EQ(d.count[KJIT_DEPART_COMPLETED], 0u);
}

TEST_F(DeparturesTest, TrampolinesAreSharedPerTargetAndKind) {
  Epoch &e = active();
  uint64_t a = native_exit_trampoline(e, kText + 0x1000, KJIT_DEPART_NATIVE_CALL, true);
  EXPECT_TRUE(e.contains_exec(a));
  EXPECT_EQ(native_exit_trampoline(e, kText + 0x1000, KJIT_DEPART_NATIVE_CALL, true), a);
  EXPECT_NE(native_exit_trampoline(e, kText + 0x1000, KJIT_DEPART_COMPLETED, false), a);
}

TEST_F(DeparturesTest, ATailCallOfANativeLeafStaysInTheCache) {
  // kText+0x2000: jmp kText+0x1000, a leaf the host lets the cache call (like
  // memcpy): called, then the return it would have made is translated.
  const uint8_t j[] = {0xe9, 0, 0, 0, 0};
  std::vector<uint8_t> code(j, j + sizeof(j));
  int32_t rel = static_cast<int32_t>(0x1000 - (0x2000 + 5));
  memcpy(&code[1], &rel, 4);
  test_shim_add_code(kText + 0x2000, code);
  test_shim_add_native_leaf(kText + 0x1000);
  uint64_t exec = kjit_engine_enter(kText + 0x2000);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  x86::Insn call = decode_skipping_nops(exec);
  EXPECT_EQ(call.cf, KJIT_CF_CALL);
  EXPECT_EQ(call.target, kText + 0x1000);
  // Then the translated return: the return site's chain, as at a `ret`,
  // whose first miss moves rcx into the return slot for the gate.
  x86::Insn site = decode(return_site_tail(call.pc + call.length));
  EXPECT_EQ(site.cf, KJIT_CF_JMP);
  uint64_t stub = skip_return_swap(site.target);
  EXPECT_NE(stub, site.target);
  EXPECT_EQ(branch_target(stub), test::kGateIndirect);
  EXPECT_EQ(active().table.find(kText + 0x1000), nullptr);  // the leaf is not translated
}

}  // namespace
}  // namespace kjit
