// SPDX-License-Identifier: GPL-2.0
#include "arch/x86/code_writer.h"

namespace kjit::x86 {
namespace {
uint8_t rex_for(uint8_t reg, bool w) {
  return static_cast<uint8_t>(0x40 | (w ? 8 : 0) | ((reg >> 3) & 1));
}
}  // namespace

bool CodeWriter::room(uint32_t n) {
  if (overflow_ || pos_ + n > cap_) {
    overflow_ = true;
    return false;
  }
  return true;
}

void CodeWriter::byte(uint8_t b) {
  if (room(1)) w_[pos_++] = b;
}
void CodeWriter::bytes(const uint8_t *p, uint32_t n) {
  if (!room(n)) return;
  __builtin_memcpy(w_ + pos_, p, n);
  pos_ += n;
}
void CodeWriter::u32(uint32_t v) {
  if (!room(4)) return;
  __builtin_memcpy(w_ + pos_, &v, 4);
  pos_ += 4;
}
void CodeWriter::u64(uint64_t v) {
  if (!room(8)) return;
  __builtin_memcpy(w_ + pos_, &v, 8);
  pos_ += 8;
}

bool patch_rel32_at(uint8_t *field_write, uint64_t field_exec, uint64_t target) {
  int64_t rel = static_cast<int64_t>(target - (field_exec + 4));
  if (!fits_i32(rel)) return false;
  int32_t r = static_cast<int32_t>(rel);
  // One aligned-or-not 4-byte store; other CPUs see the old or new target.
  __atomic_store_n(reinterpret_cast<uint32_t *>(field_write), static_cast<uint32_t>(r),
                   __ATOMIC_RELEASE);
  return true;
}

bool patch_rel32_live(uint8_t *field_write, uint64_t field_exec, uint64_t target) {
  if ((field_exec & 3) != 0 || (reinterpret_cast<uintptr_t>(field_write) & 3) != 0) return false;
  return patch_rel32_at(field_write, field_exec, target);
}

bool CodeWriter::patch_rel32(uint32_t field_offset, uint64_t target) {
  return patch_rel32_at(w_ + field_offset, exec_ + field_offset, target);
}

int32_t CodeWriter::jmp(uint64_t target) {
  if (!room(5)) return -1;
  byte(0xe9);
  uint32_t field = pos_;
  u32(0);
  if (!patch_rel32(field, target)) return -1;
  return static_cast<int32_t>(field);
}

int32_t CodeWriter::call(uint64_t target) {
  if (!room(5)) return -1;
  byte(0xe8);
  uint32_t field = pos_;
  u32(0);
  if (!patch_rel32(field, target)) return -1;
  return static_cast<int32_t>(field);
}

int32_t CodeWriter::jcc(uint8_t cond, uint64_t target) {
  if (!room(6)) return -1;
  byte(0x0f);
  byte(static_cast<uint8_t>(0x80 | (cond & 0xf)));
  uint32_t field = pos_;
  u32(0);
  if (!patch_rel32(field, target)) return -1;
  return static_cast<int32_t>(field);
}

uint32_t CodeWriter::patch_pad(uint32_t opcode_len, uint32_t ahead) const {
  return static_cast<uint32_t>((4 - ((here() + ahead + opcode_len) & 3)) & 3);
}

// CS segment-override prefixes: 64-bit mode ignores them on jmp and jcc
// (the assembler's -malign-branch-prefix-size pads branches the same way),
// so the padding is part of the branch and costs no instruction of its own,
// where a NOP in front would execute every time.
void CodeWriter::branch_padding(uint32_t n) {
  for (uint32_t i = 0; i < n; i++) byte(0x2e);
}

int32_t CodeWriter::jmp_patchable(uint64_t target) {
  branch_padding(patch_pad(1));
  return jmp(target);
}

int32_t CodeWriter::jcc_patchable(uint8_t cond, uint64_t target) {
  branch_padding(patch_pad(2));
  return jcc(cond, target);
}

void CodeWriter::jmp_far(uint64_t target) {
#ifdef KJIT_KERNEL
  // The kernel's cache lies within rel32 reach of all kernel and module
  // text, and an indirect jump there would need an ENDBR at its target on
  // an IBT kernel: a far jump is a failed emission (the block is given up
  // and its code runs natively), never an indirect branch.
  (void)target;
  overflow_ = true;
#else
  static const uint8_t kJmpRipSlot[] = {0xff, 0x25, 0, 0, 0, 0};  // jmp *0(%rip)
  bytes(kJmpRipSlot, sizeof(kJmpRipSlot));
  u64(target);
#endif
}

void CodeWriter::push_imm(uint64_t value) {
  if (fits_simm32(value)) {
    byte(0x68);
    u32(static_cast<uint32_t>(value));
    return;
  }
  // push rax; movabs rax, value; xchg rax, [rsp]  (no flags touched)
  push_reg(KJIT_REG_RAX);
  mov_reg_imm(KJIT_REG_RAX, value);
  xchg_reg_rsp_slot(KJIT_REG_RAX);
}

void CodeWriter::push_reg(uint8_t reg) {
  if (reg >= 8) byte(0x41);
  byte(static_cast<uint8_t>(0x50 | (reg & 7)));
}
void CodeWriter::pop_reg(uint8_t reg) {
  if (reg >= 8) byte(0x41);
  byte(static_cast<uint8_t>(0x58 | (reg & 7)));
}

void CodeWriter::mov_reg_imm(uint8_t reg, uint64_t value) {
  if (fits_simm32(value)) {  // mov r64, simm32: c7 /0
    byte(rex_for(reg, true));
    byte(0xc7);
    byte(static_cast<uint8_t>(0xc0 | (reg & 7)));
    u32(static_cast<uint32_t>(value));
    return;
  }
  byte(rex_for(reg, true));
  byte(static_cast<uint8_t>(0xb8 | (reg & 7)));
  u64(value);
}

void CodeWriter::mov_reg_reg(uint8_t dst, uint8_t src) {
  byte(static_cast<uint8_t>(0x48 | ((src >> 3) & 1) << 2 | ((dst >> 3) & 1)));
  byte(0x89);
  byte(static_cast<uint8_t>(0xc0 | (src & 7) << 3 | (dst & 7)));
}

void CodeWriter::mov_reg_from_rsp_slot(uint8_t reg, int32_t disp) {
  byte(static_cast<uint8_t>(0x48 | ((reg >> 3) & 1) << 2));
  byte(0x8b);
  if (fits_i8(disp)) {
    byte(static_cast<uint8_t>(0x44 | (reg & 7) << 3));  // mod=01 rm=100 (SIB), disp8
    byte(0x24);                                          // base=rsp, no index
    byte(static_cast<uint8_t>(disp));
    return;
  }
  byte(static_cast<uint8_t>(0x84 | (reg & 7) << 3));  // mod=10 rm=100 (SIB), disp32
  byte(0x24);
  u32(static_cast<uint32_t>(disp));
}

void CodeWriter::lea_rsp(int32_t disp) { lea_reg_reg_disp(KJIT_REG_RSP, KJIT_REG_RSP, disp); }

void CodeWriter::lea_reg_reg_disp(uint8_t dst, uint8_t base, int32_t disp) {
  byte(static_cast<uint8_t>(0x48 | ((dst >> 3) & 1) << 2 | ((base >> 3) & 1)));
  byte(0x8d);
  byte(static_cast<uint8_t>(0x80 | (dst & 7) << 3 | (base & 7)));
  if ((base & 7) == 4) byte(0x24);  // rsp/r12 need a SIB byte
  u32(static_cast<uint32_t>(disp));
}

void CodeWriter::xchg_reg_rsp_slot(uint8_t reg) {
  byte(static_cast<uint8_t>(0x48 | ((reg >> 3) & 1) << 2));
  byte(0x87);
  byte(static_cast<uint8_t>(0x04 | (reg & 7) << 3));
  byte(0x24);
}

}  // namespace kjit::x86
