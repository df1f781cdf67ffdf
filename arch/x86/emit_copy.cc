// SPDX-License-Identifier: GPL-2.0
// What a block's copy of the original code needs beyond the original
// bytes (arch/emit.h): pc-relative operands re-aimed, the original return
// address a call pushes, the live test of an fentry site, and the lowering
// of the transfers the copy cannot keep as they are.
#include "arch/emit.h"

namespace kjit::arch {

// The 5-byte NOP ftrace writes at a disabled fentry site (x86_nops[5]).
const uint8_t kFentryNop[kFentryNopSize] = {0x0f, 0x1f, 0x44, 0x00, 0x00};

bool is_entry_marker(const x86::Insn &in) {
  // endbr64, or the 4-byte NOP the kernel writes over a sealed one.
  static constexpr uint8_t kEndbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa}, kSealed[4] = {0x0f, 0x1f, 0x40, 0x00};
  if (in.length != 4) return false;
  return __builtin_memcmp(in.bytes, kEndbr64, 4) == 0 || __builtin_memcmp(in.bytes, kSealed, 4) == 0;
}

bool emit_copy(CodeWriter &w, const x86::Insn &in) {
  uint32_t at = w.size();
  w.bytes(in.bytes, in.length);
  if (in.rip_disp_offset && !w.overflowed()) {
    // The displacement is relative to the end of the instruction, which
    // now sits in the cache.
    int64_t disp = static_cast<int64_t>(in.target - (w.here()));
    if (!x86::fits_i32(disp)) return false;
    int32_t d = static_cast<int32_t>(disp);
    __builtin_memcpy(w.write_ptr(at + in.rip_disp_offset), &d, 4);
  }
  return true;
}

void emit_push_imm(CodeWriter &w, uint64_t value) { w.push_imm(value); }

int32_t emit_fentry_check(CodeWriter &w, uint64_t site, bool save_flags) {
  if (save_flags) w.pushfq();
  // cmpb $0x0f, site(%rip)
  const uint32_t cmp_at = w.size();
  static constexpr uint8_t kCmpRip[2] = {0x80, 0x3d};
  w.bytes(kCmpRip, sizeof(kCmpRip));
  w.u32(0);
  w.byte(kFentryNop[0]);
  if (w.overflowed()) return -1;
  const int64_t disp = static_cast<int64_t>(site - w.here());
  if (!x86::fits_i32(disp)) return -2;
  const int32_t d = static_cast<int32_t>(disp);
  __builtin_memcpy(w.write_ptr(cmp_at + 2), &d, 4);
  // je .Lgo_on (rel8, landed by emit_fentry_check_end)
  static constexpr uint8_t kJe8[2] = {0x74, 0x00};
  w.bytes(kJe8, sizeof(kJe8));
  const uint32_t rel8_at = w.size() - 1;
  if (save_flags) w.popfq();
  return static_cast<int32_t>(rel8_at);
}

bool emit_fentry_check_end(CodeWriter &w, uint32_t rel8_at, bool save_flags) {
  if (!land_rel8(w, rel8_at)) return false;
  if (save_flags) w.popfq();
  return true;
}

bool land_rel8(CodeWriter &w, uint32_t rel8_at) {
  const uint32_t hop = w.size() - (rel8_at + 1);
  if (hop > 127) return false;
  *w.write_ptr(rel8_at) = static_cast<uint8_t>(hop);
  return true;
}

int32_t emit_branch_unless(CodeWriter &w, uint8_t cond) {
  return w.jcc(static_cast<uint8_t>(cond ^ 1), w.here());
}

int32_t emit_jump_placeholder(CodeWriter &w) { return w.jmp(w.here()); }

void land_jump(CodeWriter &w, int32_t field) {
  if (field >= 0) w.patch_rel32(static_cast<uint32_t>(field), w.here());
}

uint32_t emit_short_branch_hop(CodeWriter &w, const x86::Insn &in) {
  // loop/jrcxz only have rel8: the branch hops over a short jmp to the
  // taken side (2 bytes ahead), the short jmp over the taken side.
  w.bytes(in.bytes, static_cast<uint32_t>(in.length - 1));
  w.byte(2);
  w.byte(0xeb);
  uint32_t skip_at = w.size();
  w.byte(0);
  return skip_at;
}

int32_t emit_exit_jump(CodeWriter &w, int cond) {
  return cond >= 0 ? w.jcc_patchable(static_cast<uint8_t>(cond), w.here()) : w.jmp_patchable(w.here());
}

bool emit_call(CodeWriter &w, uint64_t target) { return w.call(target) >= 0; }

void emit_indirect_target(CodeWriter &w, uint8_t reg, uint32_t pushed) {
  w.push_reg(KJIT_REG_RCX);
  if (reg == KJIT_REG_RSP)
    w.lea_reg_reg_disp(KJIT_REG_RCX, KJIT_REG_RSP, static_cast<int32_t>(pushed + 8));
  else if (reg != KJIT_REG_RCX)
    w.mov_reg_reg(KJIT_REG_RCX, reg);
}

void emit_pop_return_slot(CodeWriter &w) { w.pop_reg(KJIT_REG_RCX); }

void emit_ibl_prelude(CodeWriter &w, uint64_t miss_stub, uint64_t routine) {
  w.push_imm(miss_stub);
  w.jmp(routine);
}

}  // namespace kjit::arch
