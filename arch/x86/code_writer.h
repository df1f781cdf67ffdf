/* SPDX-License-Identifier: GPL-2.0 */
// Emits x86-64 machine code into the writable view of the code cache while
// computing displacements against the executable view.  Every emitter
// reports failure through overflowed()/false instead of writing past the end:
// running out of cache is an ordinary event, not an error.
#pragma once
#include "kjit/plugin.h"

namespace kjit::x86 {

constexpr bool fits_i32(int64_t v) { return v >= -2147483648LL && v <= 2147483647LL; }
constexpr bool fits_i8(int64_t v) { return v >= -128 && v <= 127; }
// A 64-bit value a push/mov imm32 can produce (sign extension).
constexpr bool fits_simm32(uint64_t v) { return fits_i32(static_cast<int64_t>(v)); }

// `pop qword [rsp]`: the address is computed after rsp moves up, so it
// moves the top slot into the one above it, dropping that one.
constexpr uint8_t kPopRspSlot[] = {0x8f, 0x04, 0x24};

class CodeWriter {
 public:
  CodeWriter(uint8_t *write, uint64_t exec, uint32_t capacity)
      : w_(write), exec_(exec), cap_(capacity) {}

  uint64_t here() const { return exec_ + pos_; }
  uint32_t size() const { return pos_; }
  bool overflowed() const { return overflow_; }
  uint8_t *write_ptr(uint32_t offset) { return w_ + offset; }

  void byte(uint8_t b);
  void bytes(const uint8_t *p, uint32_t n);
  void u32(uint32_t v);
  void u64(uint64_t v);

  // Each returns the offset of its rel32 field (for later patching), or
  // a negative value if the target is out of reach or the buffer is full.
  int32_t jmp(uint64_t target);
  int32_t call(uint64_t target);
  int32_t jcc(uint8_t cond, uint64_t target);
  // A jmp/jcc whose rel32 is re-pointed later while other CPUs may be
  // executing it (exits, chain tails).  Prefix padding puts the field on
  // a 4-byte boundary: an aligned 4-byte store is atomic and never straddles
  // a cache line, so another CPU fetches the old or the new target, never
  // half of each (see patch_rel32_live).
  int32_t jmp_patchable(uint64_t target);
  int32_t jcc_patchable(uint8_t cond, uint64_t target);
  // The padding bytes jmp_patchable (opcode_len 1) or jcc_patchable (2) emits
  // when it starts `ahead` bytes after the current position.
  uint32_t patch_pad(uint32_t opcode_len, uint32_t ahead = 0) const;
  // `n` CS prefixes, for the instruction that follows: a jmp, a jcc, or a
  // lea (which accesses no memory, so the override means nothing).
  void branch_padding(uint32_t n);
  // jmp through an inline 8-byte slot: reaches any address, no registers.
  // In the kernel build it fails instead (overflowed()): see there.
  void jmp_far(uint64_t target);

  void push_imm(uint64_t value);        // flag-free, register-free
  void push_reg(uint8_t reg);
  void pop_reg(uint8_t reg);
  void mov_reg_imm(uint8_t reg, uint64_t value);
  void mov_reg_reg(uint8_t dst, uint8_t src);
  void mov_reg_from_rsp_slot(uint8_t reg, int32_t disp);   // mov reg, [rsp+disp]
  void lea_rsp(int32_t disp);                               // lea rsp, [rsp+disp]
  void lea_reg_reg_disp(uint8_t dst, uint8_t base, int32_t disp);
  void xchg_reg_rsp_slot(uint8_t reg);                      // xchg reg, [rsp]
  void pop_rsp_slot() { bytes(kPopRspSlot, sizeof(kPopRspSlot)); }  // pop qword [rsp]
  void ret() { byte(0xc3); }
  void pushfq() { byte(0x9c); }
  void popfq() { byte(0x9d); }

  // Writes rel32 at `field_offset` so that it reaches `target`.
  bool patch_rel32(uint32_t field_offset, uint64_t target);

 private:
  bool room(uint32_t n);
  uint8_t *w_;
  uint64_t exec_;
  uint32_t cap_;
  uint32_t pos_ = 0;
  bool overflow_ = false;
};

// Patches a rel32 field given both views; false when out of reach.  Only
// for code no other CPU can be executing yet.
bool patch_rel32_at(uint8_t *field_write, uint64_t field_exec, uint64_t target);
// Re-points a published rel32 with one aligned atomic store.  False when out
// of reach or when the field is not 4-byte aligned: such a field can be
// fetched torn by another CPU, so it is never patched live (the caller keeps
// the old, still correct target).
bool patch_rel32_live(uint8_t *field_write, uint64_t field_exec, uint64_t target);

}  // namespace kjit::x86
