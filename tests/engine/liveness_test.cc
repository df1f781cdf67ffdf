// SPDX-License-Identifier: GPL-2.0
// Liveness across a block and its direct successors.
#include <gtest/gtest.h>

#include <cstring>

#include "core/engine_state.h"
#include "core/liveness.h"
#include "engine/test_shim.h"

namespace {
constexpr uint64_t kPc = 0xffffffff81000000ull;

// call rel32 at code[at] to code[to].
void put_call(std::vector<uint8_t> &code, uint32_t at, uint32_t to) {
  code[at] = 0xe8;
  int32_t rel = static_cast<int32_t>(to - (at + 5));
  memcpy(&code[at + 1], &rel, 4);
}

// A fresh shim and memo with the engine's abi_returns option on, as the
// module runs; the option as it was afterwards.
struct AbiReturnsOn {
  uint32_t saved = kjit::g_engine.opt.abi_returns;
  AbiReturnsOn() {
    test_shim_reset();
    kjit::forget_liveness();
    kjit::g_engine.opt.abi_returns = 1;
  }
  ~AbiReturnsOn() { kjit::g_engine.opt.abi_returns = saved; }
};

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

// A direct jump is followed: a return address that jumps back into the
// function's main path (memset's in kmem_cache_alloc) has what its target
// has live, not everything.
TEST(Liveness, DirectJumpsAreFollowed) {
  test_shim_reset();
  kjit::forget_liveness();
  // kPc: mov eax, 1 ; jmp +2 ; (2 bytes of int3) ; test ecx, ecx ; adc rax, rbx ; ret
  test_shim_add_code(kPc, {0xb8, 0x01, 0, 0, 0, 0xeb, 0x02, 0xcc, 0xcc, 0x85, 0xc9, 0x48, 0x11, 0xd8, 0xc3});
  kjit::LiveSet in = kjit::live_in_at(decoder(), kPc);
  EXPECT_EQ(in.flags & kjit::x86::kAllArithFlags, 0);  // test writes them before adc reads CF
  EXPECT_FALSE(in.regs & (1u << KJIT_REG_RAX));        // mov eax before the jump
  EXPECT_TRUE(in.regs & (1u << KJIT_REG_RCX));         // test ecx after it
  // A jump to itself ends at the horizon, everything live.
  test_shim_reset();
  kjit::forget_liveness();
  test_shim_add_code(kPc, {0xeb, 0xfe});
  kjit::LiveSet loop = kjit::live_in_at(decoder(), kPc);
  EXPECT_EQ(loop.flags, kjit::x86::kAllFlags);
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

// A direct call leaves the flags to its callee: before `call f` they are
// live exactly when f reads them before writing them, two calls deep.
TEST(Liveness, FlagsAreFollowedIntoDirectCallees) {
  test_shim_reset();
  kjit::forget_liveness();
  // kPc: mov rdi, rbx ; call kPc+0x40      kPc+0x40: test eax, eax ; ret
  // kPc+0x20: call kPc+0x60                kPc+0x60: adc rax, rbx ; ret
  // kPc+0x80: call kPc+0x90   kPc+0x90: call kPc+0xa0   kPc+0xa0: call kPc+0x40
  std::vector<uint8_t> code(0xc0, 0xcc);
  auto call = [&](uint32_t at, uint32_t to) { put_call(code, at, to); };
  const uint8_t mov[] = {0x48, 0x89, 0xdf}, test_ret[] = {0x85, 0xc0, 0xc3}, adc_ret[] = {0x48, 0x11, 0xd8, 0xc3};
  memcpy(&code[0], mov, 3);
  call(3, 0x40);
  memcpy(&code[0x40], test_ret, 3);
  call(0x20, 0x60);
  memcpy(&code[0x60], adc_ret, 4);
  call(0x80, 0x90);
  call(0x90, 0xa0);
  call(0xa0, 0x40);
  test_shim_add_code(kPc, code);
  EXPECT_EQ(kjit::live_in_at(decoder(), kPc).flags & kjit::x86::kAllArithFlags, 0);
  EXPECT_TRUE(kjit::live_in_at(decoder(), kPc + 0x20).flags & kjit::x86::kFlagCF);
  // three calls deep is past the horizon: live
  EXPECT_EQ(kjit::live_in_at(decoder(), kPc + 0x80).flags & kjit::x86::kAllArithFlags,
            kjit::x86::kAllArithFlags);
  // registers are not followed: all live before a call
  EXPECT_EQ(kjit::live_in_at(decoder(), kPc + 0x20).regs, kjit::x86::kAllGprs);
}

// After a compiled C function's return its caller reads rax, rdx, the
// callee-saved registers and DF, never the arithmetic flags or another
// scratch register; after assembly's, anything.
TEST(Liveness, ACFunctionsReturnLeavesOnlyWhatItsCallerMayRead) {
  AbiReturnsOn abi;
  // kPc: mov eax, 1 ; ret          kPc+0x10: mov eax, 1 ; ret (assembly)
  std::vector<uint8_t> code(0x20, 0xcc);
  const uint8_t mov_ret[] = {0xb8, 0x01, 0, 0, 0, 0xc3};
  memcpy(&code[0], mov_ret, sizeof(mov_ret));
  memcpy(&code[0x10], mov_ret, sizeof(mov_ret));
  test_shim_add_code(kPc, code);
  test_shim_add_c_function(kPc, kPc + 0x10);
  const kjit::LiveSet c = kjit::live_in_at(decoder(), kPc);
  EXPECT_EQ(c.flags & kjit::x86::kAllArithFlags, 0);
  EXPECT_TRUE(c.flags & kjit::x86::kFlagDF);
  for (uint32_t r : {KJIT_REG_RCX, KJIT_REG_RSI, KJIT_REG_RDI, KJIT_REG_R8, KJIT_REG_R9, KJIT_REG_R10, KJIT_REG_R11})
    EXPECT_FALSE(c.regs & (1u << r)) << "scratch register " << r;
  EXPECT_FALSE(c.regs & (1u << KJIT_REG_RAX));  // written by the mov
  for (uint32_t r : {KJIT_REG_RDX, KJIT_REG_RBX, KJIT_REG_RBP, KJIT_REG_RSP, KJIT_REG_R12, KJIT_REG_R15})
    EXPECT_TRUE(c.regs & (1u << r)) << "register " << r;
  const kjit::LiveSet as = kjit::live_in_at(decoder(), kPc + 0x10);
  EXPECT_EQ(as.flags, kjit::x86::kAllFlags);
  EXPECT_EQ(as.regs, kjit::x86::kAllGprs & ~(1u << KJIT_REG_RAX));
  // The same from the terminator's side, and nothing dead with the option off.
  kjit::x86::Insn ret;
  kjit::x86::Decoder d = decoder();
  ASSERT_EQ(d.decode(kPc + 5, &mov_ret[5], 1, &ret), kjit::x86::DecodeStatus::kOk);
  EXPECT_FALSE(kjit::live_out_of_terminator(d, ret, false, kPc + 6).regs & (1u << KJIT_REG_RSI));
  kjit::g_engine.opt.abi_returns = 0;
  EXPECT_EQ(kjit::live_out_of_terminator(d, ret, false, kPc + 6).regs, kjit::x86::kAllGprs);
}

// Before a direct call into a compiled C function r10 and r11 are dead: it
// reads neither and its caller cannot read them after it returns.  Before
// a call into assembly, or with the option off, they are live.
TEST(Liveness, RegistersACCalleeNeitherReadsNorKeepsAreDeadBeforeTheCall) {
  AbiReturnsOn abi;
  // kPc: call kPc+0x40 (C)    kPc+0x20: call kPc+0x60 (assembly)
  // kPc+0x40, kPc+0x60: mov rax, r11 ; add rax, r10 ; ret
  std::vector<uint8_t> code(0x80, 0xcc);
  auto call = [&](uint32_t at, uint32_t to) { put_call(code, at, to); };
  const uint8_t body[] = {0x4c, 0x89, 0xd8, 0x4c, 0x01, 0xd0, 0xc3};
  call(0, 0x40);
  call(0x20, 0x60);
  memcpy(&code[0x40], body, sizeof(body));
  memcpy(&code[0x60], body, sizeof(body));
  test_shim_add_code(kPc, code);
  test_shim_add_c_function(kPc + 0x40, kPc + 0x50);
  const kjit::LiveSet c = kjit::live_in_at(decoder(), kPc);
  EXPECT_EQ(c.regs & kjit::x86::kDeadBeforeCCall, 0);
  EXPECT_EQ(c.regs | kjit::x86::kDeadBeforeCCall, kjit::x86::kAllGprs);  // arguments, rax, callee-saved
  const kjit::LiveSet as = kjit::live_in_at(decoder(), kPc + 0x20);
  EXPECT_EQ(as.regs & kjit::x86::kDeadBeforeCCall, kjit::x86::kDeadBeforeCCall);
  // From the block's side: the call as its terminator.
  kjit::x86::Insn insn;
  kjit::x86::Decoder d = decoder();
  ASSERT_EQ(d.decode(kPc, code.data(), 5, &insn), kjit::x86::DecodeStatus::kOk);
  EXPECT_EQ(kjit::live_out_of_terminator(d, insn, false, kPc + 5).regs & kjit::x86::kDeadBeforeCCall, 0);
  kjit::g_engine.opt.abi_returns = 0;
  kjit::forget_liveness();
  EXPECT_EQ(kjit::live_out_of_terminator(d, insn, false, kPc + 5).regs & kjit::x86::kDeadBeforeCCall,
            kjit::x86::kDeadBeforeCCall);
}

// Before an indirect call out of a compiled C function the arithmetic flags
// are dead: the callee, whatever it is, cannot read them from compiled code.
// Out of assembly, or with the option off, everything is live.
TEST(Liveness, AnIndirectCallOutOfCLeavesTheArithmeticFlagsDead) {
  AbiReturnsOn abi;
  // kPc: mov rax, [rdi] ; call rax (C)     kPc+0x10: the same (assembly)
  std::vector<uint8_t> code(0x20, 0xcc);
  const uint8_t body[] = {0x48, 0x8b, 0x07, 0xff, 0xd0};
  memcpy(&code[0], body, sizeof(body));
  memcpy(&code[0x10], body, sizeof(body));
  test_shim_add_code(kPc, code);
  test_shim_add_c_function(kPc, kPc + 0x10);
  const kjit::LiveSet c = kjit::live_in_at(decoder(), kPc);
  EXPECT_EQ(c.flags & kjit::x86::kAllArithFlags, 0);
  EXPECT_TRUE(c.flags & kjit::x86::kFlagDF);
  EXPECT_EQ(c.regs | (1u << KJIT_REG_RAX), kjit::x86::kAllGprs);  // rax is loaded first
  EXPECT_EQ(kjit::live_in_at(decoder(), kPc + 0x10).flags, kjit::x86::kAllFlags);
  // The call as a block's terminator.
  kjit::x86::Insn call;
  kjit::x86::Decoder d = decoder();
  ASSERT_EQ(d.decode(kPc + 3, &body[3], 2, &call), kjit::x86::DecodeStatus::kOk);
  ASSERT_EQ(call.cf, KJIT_CF_CALL_INDIRECT);
  const kjit::LiveSet out = kjit::live_out_of_terminator(d, call, false, kPc + 5);
  EXPECT_EQ(out.flags & kjit::x86::kAllArithFlags, 0);
  EXPECT_EQ(out.regs, kjit::x86::kAllGprs);
  kjit::g_engine.opt.abi_returns = 0;
  kjit::forget_liveness();
  EXPECT_EQ(kjit::live_out_of_terminator(d, call, false, kPc + 5).flags, kjit::x86::kAllFlags);
  EXPECT_EQ(kjit::live_in_at(decoder(), kPc).flags, kjit::x86::kAllFlags);
}

}  // namespace
