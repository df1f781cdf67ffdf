// Liveness across a block and its direct successors.
#include <gtest/gtest.h>

#include <cstring>

#include "core/liveness.h"
#include "engine/test_shim.h"

namespace {
constexpr uint64_t kPc = 0xffffffff81000000ull;

kjit::x86::Decoder decoder() {
  kjit::x86::Decoder d;
  d.init(nullptr);
  return d;
}

TEST(Liveness, FlagsDeadBeforeAnInstructionThatWritesThemAll) {
  test_shim_reset();
  // cmp rdi, rsi ; ja +0 ; ...
  test_shim_add_code(kPc, {0x48, 0x39, 0xf7, 0x77, 0x00, 0xc3});
  kjit::LiveSet in = kjit::live_in_at(decoder(), kPc);
  EXPECT_EQ(in.flags & kjit::x86::kAllArithFlags, 0);
  EXPECT_TRUE(in.regs & (1u << KJIT_REG_RDI));
  EXPECT_TRUE(in.regs & (1u << KJIT_REG_RSI));
}

TEST(Liveness, RegisterKilledBeforeRead) {
  test_shim_reset();
  // mov eax, 1 ; add rax, rbx ; ret
  test_shim_add_code(kPc, {0xb8, 0x01, 0, 0, 0, 0x48, 0x01, 0xd8, 0xc3});
  kjit::LiveSet in = kjit::live_in_at(decoder(), kPc);
  EXPECT_FALSE(in.regs & (1u << KJIT_REG_RAX));
  EXPECT_TRUE(in.regs & (1u << KJIT_REG_RBX));
}

TEST(Liveness, ConservativeWhereCodeIsUnknown) {
  test_shim_reset();
  kjit::LiveSet in = kjit::live_in_at(decoder(), kPc);
  EXPECT_EQ(in.regs, kjit::x86::kAllGprs);
  EXPECT_EQ(in.flags, kjit::x86::kAllFlags);
}

TEST(Liveness, JccSuccessorsAreBothConsidered) {
  test_shim_reset();
  // block: jz target ; fall: test eax,eax (kills flags) ; target: adc (reads CF)
  test_shim_add_code(kPc, {0x74, 0x03, 0x85, 0xc0, 0xc3, 0x48, 0x11, 0xd8, 0xc3});
  kjit::x86::Insn jz;
  kjit::x86::Decoder d = decoder();
  uint8_t b[2] = {0x74, 0x03};
  ASSERT_EQ(d.decode(kPc, b, 2, &jz), kjit::x86::DecodeStatus::kOk);
  kjit::LiveSet out = kjit::live_out_of_terminator(d, jz, false, kPc + 2);
  EXPECT_TRUE(out.flags & kjit::x86::kFlagCF);  // the taken side reads CF
}

}  // namespace
