// SPDX-License-Identifier: GPL-2.0
// The inliner on routines compiled by the host compiler, decoded from this
// very binary, as the kernel module does with plugin modules.
#include <gtest/gtest.h>

#include <cstring>

#include "arch/x86/decoder.h"
#include "arch/x86/mnemonic.h"
#include "core/inliner.h"

namespace {

// icount's analysis routines (plugins/icount.c).  noinline + used: the
// compiler must keep a real body.
extern "C" __attribute__((noinline, used)) void icount_add(uint64_t *counter, uint64_t size) {
  *counter += size;
}
extern "C" __attribute__((noinline, used)) void icount_inc(uint64_t *counter) { (*counter)++; }
extern "C" __attribute__((noinline, used)) void ring_record(uint64_t *ring, uint64_t target) {
  ring[2 + (ring[0] & ring[1])] = target;
  ring[0]++;
}
extern "C" __attribute__((noinline, used)) void needs_flags(uint64_t *s, uint64_t rflags) {
  s[0]++;
  s[1] += !(rflags & 0x40);
}
extern "C" __attribute__((noinline, used)) void keep_pointer(uint64_t **slot, uint64_t *p) { *slot = p; }
extern "C" __attribute__((noinline, used)) uint64_t calls_out(uint64_t *p) {
  return reinterpret_cast<uint64_t>(memchr(p, 1, 64));
}

kjit::x86::Decoder decoder() {
  kjit::x86::Decoder d;
  d.init(nullptr);
  return d;
}

kjit::InlineArgs consts(std::initializer_list<uint64_t> v) {
  kjit::InlineArgs a;
  memset(&a, 0, sizeof(a));
  for (uint64_t x : v) {
    a.is_const[a.nargs] = 1;
    a.value[a.nargs++] = x;
  }
  return a;
}

// Decodes the specialised code into instructions.
std::vector<kjit::x86::Insn> decode_all(const kjit::InlinedCode &c) {
  kjit::x86::Decoder d = decoder();
  std::vector<kjit::x86::Insn> out;
  for (uint32_t off = 0; off < c.size;) {
    kjit::x86::Insn in;
    EXPECT_EQ(d.decode(off, c.code + off, c.size - off, &in), kjit::x86::DecodeStatus::kOk);
    out.push_back(in);
    off += in.length;
  }
  return out;
}

constexpr uint64_t kCounter = 0xffffffffd0001000ull;  // a data-window address

TEST(Inliner, PaperExampleBecomesOneAddOnAnAbsoluteAddress) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&icount_add),
                                   consts({kCounter, 7}), true, &c));
  auto insns = decode_all(c);
  ASSERT_EQ(insns.size(), 1u);
  // add qword [0xffffffffd0001000], 7 : no call, no argument set-up.
  EXPECT_EQ(insns[0].mnemonic, ZYDIS_MNEMONIC_ADD);
  EXPECT_EQ(insns[0].regs_read, 0);  // absolute address, immediate source
  EXPECT_EQ(c.clobbered_regs, 0);
  EXPECT_EQ(c.needs_arg_regs, 0);
  EXPECT_NE(c.flags_written, 0);     // the caller saves them only if live
  // The encoding carries the address and the size.
  int32_t disp;
  memcpy(&disp, c.code + c.size - 5, 4);  // [disp32] then imm8 in the tail
  (void)disp;
  bool found_addr = false;
  for (uint32_t i = 0; i + 4 <= c.size; i++) {
    int32_t v;
    memcpy(&v, c.code + i, 4);
    if (static_cast<uint64_t>(static_cast<int64_t>(v)) == kCounter) found_addr = true;
  }
  EXPECT_TRUE(found_addr);
}

TEST(Inliner, IncrementBecomesOneInstruction) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&icount_inc), consts({kCounter}), true, &c));
  auto insns = decode_all(c);
  ASSERT_EQ(insns.size(), 1u);
  EXPECT_EQ(c.clobbered_regs, 0);
}

TEST(Inliner, LargeConstantIsMaterialisedNotDropped) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&icount_add),
                                   consts({kCounter, 0x123456789abull}), true, &c));
  EXPECT_NE(c.clobbered_regs, 0);  // the size needs a register: it is saved if live
  bool has_imm64 = false;
  for (uint32_t i = 0; i + 8 <= c.size; i++) {
    uint64_t v;
    memcpy(&v, c.code + i, 8);
    if (v == 0x123456789abull) has_imm64 = true;
  }
  EXPECT_TRUE(has_imm64);
}

TEST(Inliner, RingBufferWithNonConstantTargetKeepsArgRegister) {
  kjit::x86::Decoder d = decoder();
  kjit::InlineArgs a = consts({kCounter});
  a.is_const[1] = 0;  // the target comes from a register at run time
  a.nargs = 2;
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&ring_record), a, true, &c));
  EXPECT_EQ(c.needs_arg_regs, 1u << KJIT_REG_RSI);
  for (const auto &in : decode_all(c)) EXPECT_NE(in.cf, KJIT_CF_CALL);
}

TEST(Inliner, RoutinesThatCallOutAreNotInlined) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  EXPECT_FALSE(kjit::inline_routine(d, reinterpret_cast<void *>(&calls_out), consts({kCounter}), true, &c));
}

TEST(Inliner, UnreachableAddressesAreRefusedInAnotherAddressSpace) {
  // A host pointer (not sign-extended 32-bit) cannot be an absolute operand.
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  uint64_t host_ptr = 0x00007f0012345678ull;
  bool ok = kjit::inline_routine(d, reinterpret_cast<void *>(&icount_inc), consts({host_ptr}), false, &c);
  if (ok) {
    // Then it must have materialised the pointer in a register.
    EXPECT_NE(c.clobbered_regs, 0);
  }
}

// Per-CPU data (kjit_alloc_percpu): the argument is a gs-relative address.
kjit::InlineArgs with_percpu(kjit::InlineArgs a, uint32_t i) {
  a.is_percpu[i] = 1;
  return a;
}
constexpr uint64_t kPercpu = 0x2b040;                  // a first-chunk __percpu pointer
constexpr uint64_t kFarPercpu = 0x000041000002b040ull;  // a later chunk's: beyond disp32

TEST(Inliner, PerCpuCounterIsOneGsRelativeAdd) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&icount_add),
                                   with_percpu(consts({kPercpu, 7}), 0), true, &c));
  auto insns = decode_all(c);
  ASSERT_EQ(insns.size(), 1u);
  EXPECT_EQ(insns[0].mnemonic, ZYDIS_MNEMONIC_ADD);
  EXPECT_EQ(insns[0].mem_segment, KJIT_SEG_GS);  // add qword gs:[0x2b040], 7
  EXPECT_EQ(insns[0].regs_read, 0);
  EXPECT_EQ(c.clobbered_regs, 0);
}

TEST(Inliner, PerCpuAddressBeyondDisp32GoesThroughARegister) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&icount_add),
                                   with_percpu(consts({kFarPercpu, 7}), 0), true, &c));
  auto insns = decode_all(c);
  ASSERT_EQ(insns.size(), 2u);  // mov rdi, imm64; add qword gs:[rdi], 7
  EXPECT_EQ(insns[0].mnemonic, ZYDIS_MNEMONIC_MOV);
  EXPECT_EQ(insns[1].mem_segment, KJIT_SEG_GS);
  EXPECT_EQ(insns[1].regs_read, 1u << KJIT_REG_RDI);
  EXPECT_EQ(c.clobbered_regs, 1u << KJIT_REG_RDI);  // saved by the caller if live
}

TEST(Inliner, PerCpuRingAddressesEveryAccessGsRelative) {
  kjit::x86::Decoder d = decoder();
  kjit::InlineArgs a = with_percpu(consts({kPercpu}), 0);
  a.is_const[1] = 0;
  a.nargs = 2;
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&ring_record), a, true, &c));
  uint32_t accesses = 0;
  for (const auto &in : decode_all(c)) {
    if (!in.has_mem_operand) continue;
    accesses++;
    EXPECT_EQ(in.mem_segment, KJIT_SEG_GS) << "mnemonic " << in.mnemonic;
  }
  EXPECT_GE(accesses, 3u);  // reads ring[0], ring[1], writes the slot and ring[0]
}

TEST(Inliner, PerCpuPointerUsedAsAValueIsNotInlined) {
  // Storing it would store the raw gs-relative offset, not an address.
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  EXPECT_FALSE(kjit::inline_routine(d, reinterpret_cast<void *>(&keep_pointer),
                                    with_percpu(consts({kCounter, kPercpu}), 1), true, &c));
  // The same routine with a plain pointer is inlined: the refusal is the
  // per-CPU value's.
  EXPECT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&keep_pointer),
                                   consts({kCounter, kCounter + 8}), true, &c));
}

}  // namespace
