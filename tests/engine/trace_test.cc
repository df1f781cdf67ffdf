// SPDX-License-Identifier: GPL-2.0
// Traces: a block that ends in an unconditional jump to a block not built
// yet gets that block laid out in place of the jump (block_builder.h).
#include <gtest/gtest.h>

#include <cstring>

#include "engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

constexpr uint64_t kNative = kText + 0x1000;  // no code: never translated

class TraceTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    add_code();
  }
  void add_code() {
    std::vector<uint8_t> code(0x500, 0xcc);
    auto put = [&](uint32_t at, std::initializer_list<uint8_t> bytes) {
      std::copy(bytes.begin(), bytes.end(), code.begin() + at);
    };
    auto put_jmp_native = [&](uint32_t at) {
      uint32_t rel = static_cast<uint32_t>(kNative - (kText + at + 5));
      put(at, {0xe9, static_cast<uint8_t>(rel), static_cast<uint8_t>(rel >> 8), static_cast<uint8_t>(rel >> 16),
               static_cast<uint8_t>(rel >> 24)});
    };
    // A: mov eax, 1 ; jmp B      B: add eax, 2 ; jmp C      C: jmp kNative
    put(0x00, {0xb8, 0x01, 0x00, 0x00, 0x00, 0xeb, 0x09});
    put(0x10, {0x83, 0xc0, 0x02, 0xeb, 0x0b});
    put(0x20, {0xe9, 0xdb, 0x0f, 0x00, 0x00});
    // D: inc eax ; jmp E         E: jmp D
    put(0x40, {0xff, 0xc0, 0xeb, 0x0c});
    put(0x50, {0xeb, 0xee});
    // call F ; jmp kNative       F: mov eax, 7 ; ret
    put(0x60, {0xe8, 0x1b, 0x00, 0x00, 0x00, 0xe9, 0x96, 0x0f, 0x00, 0x00});
    put(0x80, {0xb8, 0x07, 0x00, 0x00, 0x00, 0xc3});
    // G: jmp H                   H: mov eax, [rdi] (a user access) ; jmp kNative
    put(0xa0, {0xeb, 0x0e});
    put(0xb0, {0x8b, 0x07, 0xe9, 0x49, 0x0f, 0x00, 0x00});
    // A2: mov eax, 1 ; jmp B2    B2: add eax, 2 ; 48 x nop ; jmp C2    C2: jmp kNative
    put(0x200, {0xb8, 0x01, 0x00, 0x00, 0x00, 0xeb, 0x09});
    put(0x210, {0x83, 0xc0, 0x02});
    std::fill(code.begin() + 0x213, code.begin() + 0x243, 0x90);
    put(0x243, {0xeb, 0x1b});
    put(0x260, {0xe9, 0x9b, 0x0d, 0x00, 0x00});
    // test edi, edi ; jz T       fall: mov eax, 5 ; jmp kNative     T: mov eax, 9 ; jmp kNative
    put(0x280, {0x85, 0xff, 0x74, 0x0e});
    put(0x284, {0xb8, 0x05, 0x00, 0x00, 0x00, 0xe9, 0x72, 0x0d, 0x00, 0x00});
    put(0x292, {0xb8, 0x09, 0x00, 0x00, 0x00, 0xe9, 0x64, 0x0d, 0x00, 0x00});
    // call P ; test eax, eax ; jmp kNative              P: mov eax, 7 ; ret
    put(0x300, {0xe8, 0x1b, 0x00, 0x00, 0x00, 0x85, 0xc0});
    put_jmp_native(0x307);
    put(0x320, {0xb8, 0x07, 0x00, 0x00, 0x00, 0xc3});
    // call Q ; mov ecx, 5 ; cmovz eax, ecx ; jmp kNative   Q: mov eax, 1 ; test eax, eax ; ret
    put(0x340, {0xe8, 0x1b, 0x00, 0x00, 0x00, 0xb9, 0x05, 0x00, 0x00, 0x00, 0x0f, 0x44, 0xc1});
    put_jmp_native(0x34d);
    put(0x360, {0xb8, 0x01, 0x00, 0x00, 0x00, 0x85, 0xc0, 0xc3});
    // call R ; test eax, eax ; jmp kNative   R: mov qword [rsp], S ; ret   S: mov eax, 11 ; jmp kNative
    put(0x380, {0xe8, 0x1b, 0x00, 0x00, 0x00, 0x85, 0xc0});
    put_jmp_native(0x387);
    put(0x3a0, {0x48, 0xc7, 0x04, 0x24, 0xc0, 0x03, 0x00, 0x81, 0xc3});
    put(0x3c0, {0xb8, 0x0b, 0x00, 0x00, 0x00});
    put_jmp_native(0x3c5);
    // call F ; test eax, eax ; jmp kNative
    // F: test edi, edi ; je G ; mov eax, 1 ; ret      G: mov eax, 2 ; ret
    put(0x400, {0xe8, 0x1b, 0x00, 0x00, 0x00, 0x85, 0xc0});
    put_jmp_native(0x407);
    put(0x420, {0x85, 0xff, 0x74, 0x0c, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3});
    put(0x430, {0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3});
    test_shim_add_code(kText, code);
  }
  static const Block *copy_after(const Block *b) { return active().block_containing(end_of(b)); }
  static Block *block(uint64_t pc) { return active().table.find(pc); }
  static uint64_t end_of(const Block *b) { return b->exec + b->code_size; }

  uint64_t run_to_native(uint64_t exec, uint64_t rdi = 0) { return run_to(exec, kNative, rdi); }
};

TEST_F(TraceTest, JumpTargetsAreLaidOutInPlaceOfTheJumps) {
  uint64_t a = kjit_engine_enter(kText);
  ASSERT_TRUE(kjit_engine_is_cache_address(a));
  EXPECT_EQ(stats().blocks_built, 3u);
  EXPECT_EQ(stats().trace_fallthroughs, 2u);
  ASSERT_NE(block(kText + 0x10), nullptr);
  ASSERT_NE(block(kText + 0x20), nullptr);
  EXPECT_EQ(block(kText + 0x10)->exec, end_of(block(kText)));
  EXPECT_EQ(block(kText + 0x20)->exec, end_of(block(kText + 0x10)));
  // A's code is its copied mov alone: no jump left at its end.
  EXPECT_EQ(block(kText)->code_size, 5u);
  EXPECT_EQ(run_to_native(a), 3u);
}

TEST_F(TraceTest, OneBlockPerBuildWithoutTraces) {
  ASSERT_EQ(init([](kjit_engine_options *o) { o->max_trace_blocks = 1; }), 0);
  add_code();
  kjit_engine_enter(kText);
  EXPECT_EQ(stats().blocks_built, 1u);
  EXPECT_EQ(stats().trace_fallthroughs, 0u);
  EXPECT_EQ(block(kText + 0x10), nullptr);
}

TEST_F(TraceTest, ATraceEndsAtABlockAlreadyBuilt) {
  uint64_t b = kjit_engine_enter(kText + 0x10);
  EXPECT_EQ(stats().trace_fallthroughs, 1u);  // C after B
  uint64_t a = kjit_engine_enter(kText);
  EXPECT_EQ(stats().blocks_built, 3u);
  EXPECT_EQ(stats().trace_fallthroughs, 1u);
  EXPECT_EQ(branch_target(a + 5), b);  // A's jump, linked to B
  EXPECT_EQ(run_to_native(a), 3u);
}

TEST_F(TraceTest, AConditionalBranchIsFollowedByItsFallThrough) {
  uint64_t t = kjit_engine_enter(kText + 0x280);
  ASSERT_NE(block(kText + 0x284), nullptr);
  EXPECT_EQ(block(kText + 0x284)->exec, end_of(block(kText + 0x280)));
  EXPECT_EQ(block(kText + 0x292), nullptr);  // the taken side waits to be run
  EXPECT_EQ(run_to_native(t, 1), 5u);
  EXPECT_EQ(run_to_native(t, 0), 9u);        // through the gate, which builds it
  EXPECT_NE(block(kText + 0x292), nullptr);
}

TEST_F(TraceTest, ALoopJumpsBackToTheTraceHead) {
  uint64_t d = kjit_engine_enter(kText + 0x40);
  ASSERT_NE(block(kText + 0x50), nullptr);
  EXPECT_EQ(block(kText + 0x50)->exec, end_of(block(kText + 0x40)));
  EXPECT_EQ(branch_target(block(kText + 0x50)->exec), d);
}

// The callee laid out after the call is the trace's own copy, not in the
// table: only the trace reaches it.
TEST_F(TraceTest, ACalleeIsLaidOutAfterThePushOfTheReturnAddress) {
  uint64_t caller = kjit_engine_enter(kText + 0x60);
  EXPECT_EQ(block(kText + 0x80), nullptr);
  const Block *callee = copy_after(block(kText + 0x60));
  ASSERT_NE(callee, nullptr);
  EXPECT_EQ(callee->orig_pc, kText + 0x80);
  EXPECT_TRUE(callee->routine_start);
  // Its return address reads everything past a jump to native code: a
  // return site, not a prediction.  The ret reaches the indirect gate with
  // the original return address in the slot (swapped into rcx on the way).
  EXPECT_EQ(stats().predicted_returns, 0u);
  auto emu = emulator();
  emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
  sim::RunResult r = emu->run(caller, test::kGateIndirect, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RAX), 7u);
  EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kText + 0x65);
}

// A return to a continuation that writes the flags before reading them is
// a compare with the return address the trace's call pushed, and the
// continuation is laid out behind it.
TEST_F(TraceTest, APredictedReturnGoesOnIntoItsCallersContinuation) {
  uint64_t a = kjit_engine_enter(kText + 0x300);
  EXPECT_EQ(stats().predicted_returns, 1u);
  EXPECT_EQ(stats().trace_fallthroughs, 2u);
  EXPECT_EQ(block(kText + 0x320), nullptr);
  ASSERT_NE(block(kText + 0x305), nullptr);
  EXPECT_EQ(copy_after(block(kText + 0x300))->orig_pc, kText + 0x320);
  EXPECT_EQ(block(kText + 0x305)->exec, end_of(copy_after(block(kText + 0x300))));
  EXPECT_EQ(run_to_native(a), 7u);  // no indirect gate on the way
}

// A call a trace does not follow (here every block is built alone) gets a
// copy of its callee made for it when it first runs: the copy's return
// compares with that call's return address instead of going through the
// shared function's return site.  The shared translation is not built.
TEST_F(TraceTest, ACallATraceDidNotFollowGetsItsOwnCopyOfTheCallee) {
  ASSERT_EQ(init([](kjit_engine_options *o) { o->max_trace_blocks = 1; }), 0);
  add_code();
  uint64_t a = kjit_engine_enter(kText + 0x300);
  EXPECT_EQ(stats().call_copies, 0u);
  EXPECT_EQ(run_to_native(a), 7u);  // the direct gate once (the call), then no indirect gate
  EXPECT_EQ(stats().call_copies, 1u);
  EXPECT_EQ(stats().predicted_returns, 1u);
  EXPECT_EQ(block(kText + 0x320), nullptr);
  ASSERT_NE(block(kText + 0x305), nullptr);  // the continuation, built by the copy's return
  EXPECT_EQ(run_to_native(a), 7u);           // linked now: no gate at all
  EXPECT_EQ(stats().call_copies, 1u);
}

// The other side of a branch in a trace's copy of a callee is linked, when
// first taken, to a copy made for the return address the trace's call
// pushed (not to the shared translation of that code, whose return would
// go through a return site): its return is a compare with that address.
TEST_F(TraceTest, AnExitFromACalleesCopyGetsACopyForTheSameReturnAddress) {
  uint64_t a = kjit_engine_enter(kText + 0x400);
  EXPECT_EQ(stats().predicted_returns, 1u);  // F's fall-through, laid out
  EXPECT_EQ(run_to_native(a, 0), 2u);         // je G taken: the gate builds G's copy
  EXPECT_EQ(stats().call_copies, 1u);
  EXPECT_EQ(stats().predicted_returns, 2u);  // G's ret, a compare with kText + 0x405
  EXPECT_EQ(block(kText + 0x430), nullptr);  // no shared translation of G
  ASSERT_NE(active().find_copy(kText + 0x430, kText + 0x405), nullptr);
  EXPECT_EQ(run_to_native(a, 0), 2u);
  EXPECT_EQ(run_to_native(a, 1), 1u);
  EXPECT_EQ(stats().call_copies, 1u);
}

// A function built already is copied again into a trace that calls it.
TEST_F(TraceTest, ATraceCopiesACalleeThatIsBuiltAlready) {
  uint64_t p = kjit_engine_enter(kText + 0x320);
  kjit_engine_enter(kText + 0x300);
  EXPECT_EQ(block(kText + 0x320)->exec, p);
  EXPECT_NE(copy_after(block(kText + 0x300))->exec, p);
  EXPECT_EQ(stats().predicted_returns, 1u);
}

// Where the continuation reads the flags the callee left (ZF clear here),
// the compare uses rcx, which it writes first, and leaves the flags alone.
TEST_F(TraceTest, APredictedReturnKeepsFlagsTheContinuationReads) {
  uint64_t a = kjit_engine_enter(kText + 0x340);
  EXPECT_EQ(stats().predicted_returns, 1u);
  EXPECT_EQ(run_to_native(a), 1u);  // cmovz not taken
}

// The return of a compiled C function (an fentry site's owner) that the
// trace called is the pop of its slot and the caller's continuation: only
// a hook at the function's entry writes that slot, and the copy ran none.
TEST_F(TraceTest, AReturnOfACompiledCFunctionIsThePopOfItsSlot) {
  test_shim_add_c_function(kText + 0x320, kText + 0x326);
  uint64_t a = kjit_engine_enter(kText + 0x300);
  EXPECT_EQ(stats().predicted_returns, 1u);
  EXPECT_EQ(stats().unchecked_returns, 1u);
  const Block *p = copy_after(block(kText + 0x300));
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->orig_pc, kText + 0x320);
  // mov eax, 7 ; pop rcx (dead at the continuation), and the continuation
  // laid out behind
  static const uint8_t kPopSlot[] = {0xb8, 0x07, 0x00, 0x00, 0x00, 0x59};
  ASSERT_GE(p->code_size, sizeof(kPopSlot));
  EXPECT_EQ(std::memcmp(active().write_at(p->code_offset), kPopSlot, sizeof(kPopSlot)), 0)
      << ::testing::PrintToString(std::vector<uint8_t>(active().write_at(p->code_offset),
                                                     active().write_at(p->code_offset) + p->code_size));
  EXPECT_EQ(p->exec + p->code_size, block(kText + 0x305)->exec);
  EXPECT_EQ(run_to_native(a), 7u);
}

// A callee that rewrites its return address returns there, through the
// return site behind the compare: the gate gets the new address.  (R is
// not a compiled C function: assembly may write its slot.)
TEST_F(TraceTest, AReturnAddressTheCalleeRewroteIsFollowed) {
  uint64_t a = kjit_engine_enter(kText + 0x380);
  EXPECT_EQ(stats().predicted_returns, 1u);
  auto emu = emulator();
  emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
  sim::RunResult r = emu->run(a, test::kGateIndirect, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kText + 0x3c0);
  EXPECT_EQ(emu->gpr(KJIT_REG_RSP), kStackTop - 0x100 - 16);  // the gate's return, above the slot
}

TEST_F(TraceTest, BlocksWithUserAccessesAreNotLaidOut) {
  test_shim_add_extable(kText + 0xb0, 0, 1);
  uint64_t g = kjit_engine_enter(kText + 0xa0);
  EXPECT_EQ(stats().blocks_built, 1u);
  EXPECT_EQ(stats().trace_fallthroughs, 0u);
  EXPECT_EQ(branch_target(branch_target(g)), test::kGateDirect);  // G's jump, to its stub
  EXPECT_EQ(block(kText + 0xb0), nullptr);
}

// Near the end of a cache half, the blocks after the first may not fit: the
// jump they replace is put back, and the translation still runs A2, B2, C2
// (B2 is long, so that some of the rooms tried fit A2 and not B2).
TEST_F(TraceTest, EveryRoomLeftRunsTheWholePath) {
  uint32_t partial = 0, whole = 0;
  for (uint32_t room = 0; room < 256; room++) {
    ASSERT_EQ(init(nullptr), 0);
    add_code();
    active().code_used = active().code_size - room;
    uint64_t a = kjit_engine_enter(kText + 0x200);
    ASSERT_TRUE(kjit_engine_is_cache_address(a)) << room;  // in the other half if need be
    uint64_t laid = stats().trace_fallthroughs;
    partial += stats().flushes == 0 && laid < 2;
    whole += stats().flushes == 0 && laid == 2;
    EXPECT_EQ(run_to_native(a), 3u) << "room " << room;
  }
  EXPECT_GT(partial, 0u);  // the rooms cover the case this test is about
  EXPECT_GT(whole, 0u);
}

}  // namespace
}  // namespace kjit
