// SPDX-License-Identifier: GPL-2.0
// The decoder wrapper: control-flow classes (including the kernel's thunks
// and fentry sites), registers and flags, RIP-relative operands, prefixes.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "arch/x86/decoder.h"

namespace {
using kjit::x86::DecodeStatus;
using kjit::x86::Insn;

constexpr uint64_t kPc = 0xffffffff81000000ull;
constexpr uint64_t kRetThunk = 0xffffffff81e01ef0ull;
constexpr uint64_t kFentry = 0xffffffff8106b730ull;
constexpr uint64_t kThunkRax = 0xffffffff81e01000ull;
constexpr uint64_t kItsThunkR11 = 0xffffffff81e02100ull;

kjit_os_kernel_facts facts() {
  kjit_os_kernel_facts f;
  memset(&f, 0, sizeof(f));
  f.return_thunk = kRetThunk;
  f.fentry = kFentry;
  f.retpoline_thunk[KJIT_REG_RAX] = kThunkRax;
  f.its_thunk[KJIT_REG_R11] = kItsThunkR11;
  return f;
}

// A rel32 jmp/call at kPc toward `target`.
std::vector<uint8_t> rel32(uint8_t opcode, uint64_t target) {
  int32_t rel = static_cast<int32_t>(target - (kPc + 5));
  std::vector<uint8_t> b{opcode, 0, 0, 0, 0};
  memcpy(&b[1], &rel, 4);
  return b;
}

Insn decode(std::vector<uint8_t> bytes, bool with_facts = true) {
  kjit::x86::Decoder d;
  kjit_os_kernel_facts f = facts();
  d.init(with_facts ? &f : nullptr);
  Insn in;
  EXPECT_EQ(d.decode(kPc, bytes.data(), static_cast<uint32_t>(bytes.size()), &in), DecodeStatus::kOk);
  return in;
}

TEST(Decoder, ReturnThunkJumpIsAReturn) {
  EXPECT_EQ(decode(rel32(0xe9, kRetThunk)).cf, KJIT_CF_RET);
  EXPECT_EQ(decode(rel32(0xe9, kRetThunk), false).cf, KJIT_CF_JMP);
  EXPECT_EQ(decode({0xc3}).cf, KJIT_CF_RET);
}

TEST(Decoder, RetpolineAndItsThunksAreIndirectTransfers) {
  Insn call = decode(rel32(0xe8, kThunkRax));
  EXPECT_EQ(call.cf, KJIT_CF_CALL_INDIRECT);
  EXPECT_EQ(call.indirect_reg, KJIT_REG_RAX);
  EXPECT_TRUE(call.regs_read & (1u << KJIT_REG_RAX));
  Insn jmp = decode(rel32(0xe9, kItsThunkR11));
  EXPECT_EQ(jmp.cf, KJIT_CF_JMP_INDIRECT);
  EXPECT_EQ(jmp.indirect_reg, KJIT_REG_R11);
  Insn native = decode({0xff, 0xd0});  // call *%rax
  EXPECT_EQ(native.cf, KJIT_CF_CALL_INDIRECT);
  EXPECT_EQ(native.indirect_reg, KJIT_REG_RAX);
  Insn mem = decode({0xff, 0x24, 0xc5, 0, 0, 0, 0});  // jmp *0(,%rax,8)
  EXPECT_EQ(mem.cf, KJIT_CF_JMP_INDIRECT);
  EXPECT_EQ(mem.indirect_reg, kjit::x86::kNoReg);
}

TEST(Decoder, FentryCallIsAnFtraceSite) {
  EXPECT_EQ(decode(rel32(0xe8, kFentry)).cf, KJIT_CF_FENTRY);
  Insn plain = decode(rel32(0xe8, kPc + 0x100));
  EXPECT_EQ(plain.cf, KJIT_CF_CALL);
  EXPECT_EQ(plain.target, kPc + 0x100);
}

TEST(Decoder, TrapsAndSystemInstructions) {
  EXPECT_EQ(decode({0x0f, 0x0b}).cf, KJIT_CF_TRAP);        // ud2 (BUG/WARN)
  EXPECT_EQ(decode({0xcc}).cf, KJIT_CF_TRAP);              // int3
  EXPECT_EQ(decode({0x48, 0x0f, 0x07}).cf, KJIT_CF_SYSTEM); // sysretq
  EXPECT_EQ(decode({0x48, 0xcf}).cf, KJIT_CF_SYSTEM);       // iretq
}

TEST(Decoder, ConditionalBranchesIncludingRel8Forms) {
  Insn jz = decode({0x74, 0x10});
  EXPECT_EQ(jz.cf, KJIT_CF_JCC);
  EXPECT_EQ(jz.jcc_cond, 0x4);
  EXPECT_EQ(jz.target, kPc + 0x12);
  EXPECT_TRUE(jz.flags_read & kjit::x86::kFlagZF);
  Insn jrcxz = decode({0xe3, 0xfe});
  EXPECT_EQ(jrcxz.cf, KJIT_CF_JCC);
  EXPECT_EQ(jrcxz.jcc_kind, kjit::x86::JccKind::kJrcxz);
  EXPECT_EQ(jrcxz.target, kPc);
  Insn loop = decode({0xe2, 0x00});
  EXPECT_EQ(loop.jcc_kind, kjit::x86::JccKind::kLoop);
  EXPECT_TRUE(loop.regs_read & (1u << KJIT_REG_RCX));
}

TEST(Decoder, RipRelativeOperandOffsetAndTarget) {
  // mov rax, [rip + 0x100]
  Insn in = decode({0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00});
  EXPECT_EQ(in.rip_disp_offset, 3);
  EXPECT_EQ(in.target, kPc + 7 + 0x100);
  EXPECT_EQ(in.cf, KJIT_CF_NONE);
}

TEST(Decoder, RegistersAndFlags) {
  Insn add = decode({0x48, 0x01, 0xd8});  // add rax, rbx
  EXPECT_EQ(add.regs_read, (1u << KJIT_REG_RAX) | (1u << KJIT_REG_RBX));
  EXPECT_EQ(add.regs_written, 1u << KJIT_REG_RAX);
  EXPECT_EQ(add.flags_written, kjit::x86::kAllArithFlags);
  Insn movb = decode({0xb0, 0x05});  // mov al, 5: a partial write reads too
  EXPECT_TRUE(movb.regs_read & (1u << KJIT_REG_RAX));
  EXPECT_EQ(movb.regs_written, 0);
  Insn shl = decode({0x48, 0xd3, 0xe0});  // shl rax, cl: count 0 keeps flags
  EXPECT_EQ(shl.flags_written, 0);
  EXPECT_NE(shl.flags_read, 0);
  Insn lockcx = decode({0xf0, 0x48, 0x0f, 0xb1, 0x0f});  // lock cmpxchg [rdi], rcx
  EXPECT_TRUE(lockcx.prefixes & kjit::x86::kPrefixLock);
  EXPECT_TRUE(lockcx.regs_read & (1u << KJIT_REG_RAX));
}

// A shift by an immediate count that the CPU's masking leaves nonzero
// writes its flags (they are dead before it); by cl, or by an immediate
// masked to zero, it may leave them as they were.  A rotate writes only CF
// and OF; an 8-bit rcl may rotate by zero (count modulo 9).
TEST(Decoder, ShiftsByAnImmediateWriteTheirFlags) {
  constexpr uint8_t kCfOf = kjit::x86::kFlagCF | kjit::x86::kFlagOF;
  for (const std::vector<uint8_t> &bytes : {std::vector<uint8_t>{0xc1, 0xea, 0x06},         // shr edx, 6
                                            std::vector<uint8_t>{0x48, 0xd1, 0xe0},         // shl rax, 1
                                            std::vector<uint8_t>{0x48, 0xc1, 0xe0, 0x20},   // shl rax, 32
                                            std::vector<uint8_t>{0x48, 0x0f, 0xa4, 0xd8, 3}}) {  // shld rax, rbx, 3
    Insn in = decode(bytes);
    EXPECT_EQ(in.flags_written, kjit::x86::kAllArithFlags) << std::hex << int(bytes[1]);
    EXPECT_EQ(in.flags_read, 0) << std::hex << int(bytes[1]);
  }
  Insn masked = decode({0xc1, 0xe0, 0x20});  // shl eax, 32: masked to 0
  EXPECT_EQ(masked.flags_written, 0);
  EXPECT_EQ(masked.flags_read & kjit::x86::kAllArithFlags, kjit::x86::kAllArithFlags);
  Insn rol = decode({0xc1, 0xc0, 0x03});  // rol eax, 3
  EXPECT_EQ(rol.flags_written, kCfOf);
  EXPECT_EQ(rol.flags_read, 0);
  Insn rcl = decode({0xc0, 0xd0, 0x09});  // rcl al, 9: by 9 mod 9
  EXPECT_EQ(rcl.flags_written, 0);
  EXPECT_TRUE(rcl.flags_read & kjit::x86::kFlagCF);
}

// `mov REG, imm` at every width names REG's GPR: a 64- or 32-bit write
// replaces it, a 16- or 8-bit one merges into it (ah..bh are bits 8..15 of
// rax..rbx).
TEST(Decoder, EveryGprAtEveryWidth) {
  for (uint8_t r = 0; r < 16; r++) {
    const uint8_t lo = r & 7, rex_b = r >= 8 ? 1 : 0;
    const uint16_t bit = static_cast<uint16_t>(1u << r);
    Insn q = decode({static_cast<uint8_t>(0x48 | rex_b), 0xc7, static_cast<uint8_t>(0xc0 | lo), 1, 0, 0, 0});
    EXPECT_EQ(q.regs_written, bit) << "mov r64 #" << int(r);
    std::vector<uint8_t> d{static_cast<uint8_t>(0xb8 | lo), 1, 0, 0, 0};
    if (rex_b) d.insert(d.begin(), 0x41);
    EXPECT_EQ(decode(d).regs_written, bit) << "mov r32 #" << int(r);
    std::vector<uint8_t> w{0x66, static_cast<uint8_t>(0xb8 | lo), 1, 0};
    if (rex_b) w.insert(w.begin() + 1, 0x41);
    Insn wi = decode(w);
    EXPECT_EQ(wi.regs_written, 0) << "mov r16 #" << int(r);
    EXPECT_EQ(wi.regs_modified, bit) << "mov r16 #" << int(r);
    // with a REX prefix, byte registers 4..7 are spl..dil
    Insn b = decode({static_cast<uint8_t>(0x40 | rex_b), static_cast<uint8_t>(0xb0 | lo), 1});
    EXPECT_EQ(b.regs_modified, bit) << "mov r8 #" << int(r);
    EXPECT_TRUE(b.regs_read & bit) << "mov r8 #" << int(r);
  }
  for (uint8_t h = 0; h < 4; h++) {  // mov ah/ch/dh/bh, 1
    Insn b = decode({static_cast<uint8_t>(0xb4 + h), 1});
    EXPECT_EQ(b.regs_modified, 1u << h) << "high byte #" << int(h);
  }
  EXPECT_EQ(decode({0x0f, 0x01, 0xf8}).regs_modified, 0);  // swapgs: no GPR
}

TEST(Decoder, BranchHintPrefixes) {
  EXPECT_TRUE(decode({0x3e, 0x74, 0x00}).prefixes & kjit::x86::kPrefixHintTaken);
  EXPECT_TRUE(decode({0x2e, 0x74, 0x00}).prefixes & kjit::x86::kPrefixHintNotTaken);
}

TEST(Decoder, TruncatedAndInvalidBytes) {
  kjit::x86::Decoder d;
  d.init(nullptr);
  Insn in;
  const uint8_t trunc[] = {0x48, 0x8b};
  EXPECT_NE(d.decode(kPc, trunc, sizeof(trunc), &in), DecodeStatus::kOk);
  const uint8_t bad[] = {0x0f, 0xff, 0xff, 0xff};  // ud0 with junk is valid; use 0x06 in 64-bit
  (void)bad;
  const uint8_t invalid64[] = {0x06};  // push es: invalid in 64-bit mode
  EXPECT_EQ(d.decode(kPc, invalid64, 1, &in), DecodeStatus::kInvalid);
}

}  // namespace
