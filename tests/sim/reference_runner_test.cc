// SPDX-License-Identifier: GPL-2.0
#include "reference_runner.h"

#include <gtest/gtest.h>

#include "kjit/plugin.h"
#include "test_code.h"

namespace kjit::sim {
namespace {

using namespace test;

// loop_code(), by hand:
//   400000 xor eax,eax; 400002 mov ecx,5        (once)
//   400007 add rax,rcx; 40000a dec ecx; 40000c jnz 400007   (5 times)
//   40000e call 400020; 400020 add rax,100; 400024 ret
//   400013 lock cmpxchg [rdi],rdx; 400018 ret
// instructions: 2 + 3*5 + 1 + 2 + 2 = 22
// blocks: the entry block (400000..jnz), one after each of the 5 jnz (4 to
//   400007, 1 to 40000e), 400020 after the call, 400013 after the callee's
//   ret = 8 (the final ret goes to the sentinel, not a block)
// jnz: 5 executed, 4 taken; backward, so predicted taken: 4 correct
// rax before cmpxchg = 5+4+3+2+1+100 = 115; [rdi] = 7 -> fails, rax = 7
TEST(ReferenceRunner, CountsAKnownLoop) {
  std::vector<uint8_t> data(4096, 0);
  data[0] = 7;
  const Capture cap = make_capture(loop_code(), 0, data);
  const ReferenceResult r = run_reference(cap);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.run.reason, StopReason::kSentinel) << r.run.message;
  const ReferenceCounts &c = r.counts;
  EXPECT_EQ(c.instructions, 22u);
  EXPECT_EQ(c.blocks, 8u);
  EXPECT_EQ(c.call_trace, std::vector<uint64_t>{kCode + 0x20});
  EXPECT_EQ(c.routine_entries.size(), 2u);
  EXPECT_EQ(c.routine_entries.at(kCode), 1u);
  EXPECT_EQ(c.routine_entries.at(kCode + 0x20), 1u);
  EXPECT_EQ(c.cond_branches, 5u);
  EXPECT_EQ(c.cond_taken, 4u);
  EXPECT_EQ(c.cond_predicted, 4u);
  EXPECT_EQ(c.lock_cmpxchg, 1u);
  EXPECT_EQ(c.lock_cmpxchg_failed, 1u);
  EXPECT_EQ(r.final_regs.gpr[KJIT_REG_RAX], 7u);
  // The call pushed its return address: the first write.
  ASSERT_GE(r.writes.size(), 1u);
  EXPECT_EQ(r.writes[0].addr, kStackTop - 16);
  EXPECT_EQ(r.writes[0].value, kCode + 0x13);
}

TEST(ReferenceRunner, SuccessfulCmpxchgIsNotAFailure) {
  std::vector<uint8_t> data(4096, 0);
  data[0] = 115;
  const ReferenceResult r = run_reference(make_capture(loop_code(), 0, data));
  EXPECT_EQ(r.counts.lock_cmpxchg, 1u);
  EXPECT_EQ(r.counts.lock_cmpxchg_failed, 0u);
}

TEST(ReferenceRunner, RepStringCountsOnce) {
  // rep stosb with rcx = 3 (al = 0xab); ret
  CaptureBuilder b;
  b.add_region(kCode, {0xf3, 0xaa, 0xc3}, kPermR | kPermX)
      .add_zero_region(kData, 4096, kPermR | kPermW)
      .add_stack(kStackTop, 0x1000)
      .set_arg(0, kData)
      .set_gpr(KJIT_REG_RCX, 3)
      .set_gpr(KJIT_REG_RAX, 0xab)
      .set_entry(kCode);
  Capture cap;
  ASSERT_EQ(b.build(&cap), "");
  const ReferenceResult r = run_reference(cap);
  ASSERT_EQ(r.run.reason, StopReason::kSentinel) << r.run.message;
  EXPECT_EQ(r.counts.instructions, 2u);
  EXPECT_EQ(r.counts.blocks, 1u);
  EXPECT_EQ(r.writes.size(), 3u);
}

TEST(ReferenceRunner, ForwardBranchTakenIsMispredicted) {
  // test edi, edi; jz +1; nop; ret   (rdi != 0: not taken, predicted)
  // then with rdi = 0 (taken forward: mispredicted)
  const std::vector<uint8_t> code = {0x85, 0xff, 0x74, 0x01, 0x90, 0xc3};
  for (uint64_t rdi : {1u, 0u}) {
    Capture cap = make_capture(code);
    cap.regs.gpr[KJIT_REG_RDI] = rdi;
    const ReferenceResult r = run_reference(cap);
    ASSERT_EQ(r.run.reason, StopReason::kSentinel);
    EXPECT_EQ(r.counts.cond_branches, 1u);
    EXPECT_EQ(r.counts.cond_taken, rdi == 0 ? 1u : 0u);
    EXPECT_EQ(r.counts.cond_predicted, rdi == 0 ? 0u : 1u);
    EXPECT_EQ(r.counts.instructions, rdi == 0 ? 3u : 4u);
    EXPECT_EQ(r.counts.blocks, 2u);
  }
}

TEST(ReferenceRunner, IndirectCallIsTraced) {
  // mov rax, 400010; call rax; ret ... 400010: ret
  std::vector<uint8_t> code = {0x48, 0xc7, 0xc0, 0x10, 0x00, 0x40, 0x00,  // mov rax, 0x400010
                               0xff, 0xd0,                                // call rax
                               0xc3};
  code.resize(0x10, 0xcc);
  code.push_back(0xc3);
  const ReferenceResult r = run_reference(make_capture(code));
  ASSERT_EQ(r.run.reason, StopReason::kSentinel) << r.run.message;
  EXPECT_EQ(r.counts.call_trace, std::vector<uint64_t>{kCode + 0x10});
  EXPECT_EQ(r.counts.blocks, 3u);
  EXPECT_EQ(r.counts.instructions, 4u);
}

TEST(InsnClassifier, ClassifiesWithCapstone) {
  InsnClassifier c;
  InsnClass k;
  const uint8_t jnz[] = {0x75, 0xf9};
  ASSERT_TRUE(c.classify(0x40000c, jnz, sizeof jnz, &k));
  EXPECT_TRUE(k.transfer);
  EXPECT_TRUE(k.conditional);
  EXPECT_EQ(k.direct_target, 0x400007u);
  const uint8_t lock_cmpxchg[] = {0xf0, 0x48, 0x0f, 0xb1, 0x17};
  ASSERT_TRUE(c.classify(0x1000, lock_cmpxchg, sizeof lock_cmpxchg, &k));
  EXPECT_TRUE(k.lock_cmpxchg);
  EXPECT_FALSE(k.transfer);
  const uint8_t jmp_thunk[] = {0xe9, 0x00, 0x10, 0x00, 0x00};  // jmp to a return thunk
  ASSERT_TRUE(c.classify(0x2000, jmp_thunk, sizeof jmp_thunk, &k));
  EXPECT_TRUE(k.transfer);
  EXPECT_FALSE(k.conditional);
  const uint8_t bad[] = {0x0f, 0xff};
  EXPECT_FALSE(c.classify(0x3000, bad, 1, &k));
}

}  // namespace
}  // namespace kjit::sim
