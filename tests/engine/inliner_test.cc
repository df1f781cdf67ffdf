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


// Registers dead at the point instead of live ones the routine writes.
extern "C" __attribute__((noinline, used)) void ring_record_masked(uint64_t *ring, uint64_t mask, uint64_t target) {
  uint64_t head = ring[0];
  ring[0] = head + 1;
  ring[2 + (head & mask)] = target;
}
extern "C" __attribute__((noinline, used)) void shift_by_count(uint64_t *s) { s[0] <<= (s[1] & 63); }

uint16_t mapped(uint16_t bits, const uint8_t map[16]) {
  uint16_t out = 0;
  for (uint32_t r = 0; r < 16; r++)
    if (bits >> r & 1) out |= static_cast<uint16_t>(1u << map[r]);
  return out;
}

TEST(InlinerRegisters, CopyUsesRegistersDeadAtThePoint) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&ring_record_masked),
                                   consts({kCounter, 0xffff, 0xffffffff81000000ull}), true, &c));
  ASSERT_NE(c.clobbered_regs, 0);
  EXPECT_EQ(c.needs_arg_regs, 0);  // every argument folded
  EXPECT_EQ(c.renamable_regs, c.clobbered_regs);
  EXPECT_EQ(c.used_regs & ~c.clobbered_regs, 0);
  // Everything live but r10 and r11 (before a call into C).
  const uint16_t live = static_cast<uint16_t>(kjit::x86::kAllGprs & ~kjit::x86::kDeadBeforeCCall);
  uint8_t map[16];
  const uint16_t moved = kjit::arch::rename_targets(c, live, map);
  EXPECT_EQ(moved, c.clobbered_regs & live);
  const kjit::InlinedCode *r = kjit::arch::rename_inlined_registers(c, live);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->clobbered_regs & live, 0) << "still writes a live register";
  EXPECT_EQ(r->clobbered_regs, mapped(c.clobbered_regs, map));
  EXPECT_EQ(r->used_regs & live, 0);
  // The same instructions, one for one, on the exchanged registers.
  auto before = decode_all(c), after = decode_all(*r);
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); i++) {
    EXPECT_EQ(after[i].mnemonic, before[i].mnemonic) << i;
    EXPECT_EQ(after[i].regs_read, mapped(before[i].regs_read, map)) << i;
    EXPECT_EQ(after[i].regs_written, mapped(before[i].regs_written, map)) << i;
    EXPECT_EQ(after[i].flags_written, before[i].flags_written) << i;
    EXPECT_EQ(after[i].mem_written, before[i].mem_written) << i;
    EXPECT_EQ(after[i].target, before[i].target) << i;  // absolute addresses kept
  }
  // Nothing to move where the registers it writes are dead anyway.
  EXPECT_EQ(kjit::arch::rename_inlined_registers(c, static_cast<uint16_t>(live & ~c.clobbered_regs)), nullptr);
}

TEST(InlinerRegisters, NoFreeRegisterNoCopy) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&ring_record_masked),
                                   consts({kCounter, 0xffff, 0xffffffff81000000ull}), true, &c));
  uint8_t map[16];
  EXPECT_EQ(kjit::arch::rename_targets(c, kjit::x86::kAllGprs, map), 0);
  EXPECT_EQ(kjit::arch::rename_inlined_registers(c, kjit::x86::kAllGprs), nullptr);
}

// A shift by cl: rcx is the only register the encoding allows.
TEST(InlinerRegisters, RegisterTheEncodingImpliesStays) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&shift_by_count), consts({kCounter}), true, &c));
  ASSERT_TRUE(c.clobbered_regs & (1u << KJIT_REG_RCX));
  EXPECT_FALSE(c.renamable_regs & (1u << KJIT_REG_RCX));
  const kjit::InlinedCode *r = kjit::arch::rename_inlined_registers(c, 1u << KJIT_REG_RCX);
  EXPECT_EQ(r, nullptr);
}

// Internal branches are laid out for the original lengths: no copy.
extern "C" __attribute__((noinline, used)) void store_one_of_two(uint64_t *s) {
  uint64_t v = s[1];
  if (v > 100) s[0] = v + 7;
  else s[2] = v * 3;
}

TEST(InlinerRegisters, RoutineWithBranchesIsNotRenamed) {
  kjit::x86::Decoder d = decoder();
  kjit::InlinedCode c;
  ASSERT_TRUE(kjit::inline_routine(d, reinterpret_cast<void *>(&store_one_of_two), consts({kCounter}), true, &c));
  bool branches = false;
  for (const auto &in : decode_all(c)) branches |= in.cf == KJIT_CF_JCC || in.cf == KJIT_CF_JMP;
  ASSERT_TRUE(branches);
  ASSERT_NE(c.clobbered_regs, 0);
  EXPECT_EQ(c.renamable_regs, 0);
  EXPECT_EQ(kjit::arch::rename_inlined_registers(c, c.clobbered_regs), nullptr);
}

}  // namespace
