// SPDX-License-Identifier: GPL-2.0
// Indirect-branch chains and predicted returns (arch/emit.h); the protocol
// they keep, and why, is core/indirect_chain.h's.  The original target is
// in rcx, the program's rcx at [rsp]; nothing here touches the flags but
// the compares of ABI return sites and flag-free predicted returns.
#include "arch/emit.h"

namespace kjit::arch {
namespace {

constexpr uint8_t kLeaRcx[] = {0x48, 0x8d, 0x89};                   // lea rcx, [rcx + disp32]
constexpr uint8_t kCmpRspSlotImm32[] = {0x48, 0x81, 0x3c, 0x24};  // cmp qword [rsp], imm32
constexpr uint8_t kJe8 = 0x74, kJrcxz = 0xe3;

// The rel8 at `skip_at` hops over a link's few bytes to the writer's
// position (nothing to land when the link did not fit).
void land_hop(CodeWriter &w, uint32_t skip_at) {
  if (!w.overflowed()) land_rel8(w, skip_at);
}

// `op8 hit` over a padded jmp to `fallback` that later appends re-point:
// the hit is the short branch taken.  Returns the jmp's rel32 field.
int32_t hop_over_fallback(CodeWriter &w, uint8_t op8, uint64_t fallback) {
  w.byte(op8);
  uint32_t skip_at = w.size();
  w.byte(0);
  int32_t next_field = w.jmp_patchable(fallback);
  land_hop(w, skip_at);
  return next_field;
}

// A return site's own first link: `opcode operand32; jcc hit; jmp next`,
// then the room for its hit.  The operand (0 until the first target,
// matching no kernel address) is stored while other CPUs may run the site:
// CS prefixes put it on a 4-byte boundary (ignored on a lea, and on a
// memory operand in 64-bit mode).
void emit_inline_link(CodeWriter &w, const uint8_t *opcode, uint32_t opcode_len, uint8_t jcc, uint32_t hit_room,
                      ReturnSiteFields *f) {
  w.branch_padding(w.patch_pad(opcode_len));
  w.bytes(opcode, opcode_len);
  f->compare = w.size();
  w.u32(0);
  w.byte(jcc);
  uint32_t skip_at = w.size();
  w.byte(0);
  int32_t tail = w.jmp_patchable(w.here());  // to the stubs, then the next link
  f->tail = static_cast<uint32_t>(tail < 0 ? 0 : tail);
  land_hop(w, skip_at);
  f->hit = w.size();
  for (uint32_t i = 0; i < hit_room; i++) w.byte(0xcc);
}

}  // namespace

bool chain_target_encodable(uint64_t pc) { return x86::fits_i32(-static_cast<int64_t>(pc)) && x86::fits_simm32(pc); }

bool return_compare_encodable(uint64_t pc, uint64_t previous) {
  return x86::fits_i32(static_cast<int64_t>(previous - pc));
}

int32_t emit_chain_compare(CodeWriter &w, uint64_t pc, uint64_t fallback) {
  w.bytes(kLeaRcx, sizeof(kLeaRcx));
  w.u32(static_cast<uint32_t>(-static_cast<int64_t>(pc)));
  w.byte(kJrcxz);  // hit: over the restore and the (padded) jmp
  uint32_t skip_at = w.size();
  w.byte(0);
  w.bytes(kLeaRcx, sizeof(kLeaRcx));
  w.u32(static_cast<uint32_t>(pc));
  // The next append re-points this jmp while other CPUs may run it.
  int32_t next_field = w.jmp_patchable(fallback);
  land_hop(w, skip_at);
  return next_field;
}

int32_t emit_return_compare(CodeWriter &w, uint64_t pc, uint64_t previous, uint64_t fallback) {
  w.bytes(kLeaRcx, sizeof(kLeaRcx));
  w.u32(static_cast<uint32_t>(previous - pc));
  return hop_over_fallback(w, kJrcxz, fallback);
}

int32_t emit_abi_return_compare(CodeWriter &w, uint64_t pc, uint64_t fallback) {
  w.bytes(kCmpRspSlotImm32, sizeof(kCmpRspSlotImm32));
  w.u32(static_cast<uint32_t>(pc));
  return hop_over_fallback(w, kJe8, fallback);
}

void emit_chain_hit_restore(CodeWriter &w) { w.pop_reg(KJIT_REG_RCX); }

void emit_return_hit_restore(CodeWriter &w, bool abi_return) {
  if (!abi_return) w.pop_reg(KJIT_REG_RCX);  // the return slot is on top again
}

void emit_drop_return_slot(CodeWriter &w) { w.lea_rsp(8); }

void emit_native_return(CodeWriter &w) { w.ret(); }

uint32_t return_compare_operand(uint64_t pc, bool abi_return) {
  // `lea rcx, [rcx - pc]`, or `cmp qword [rsp], pc` in an ABI return site.
  return abi_return ? static_cast<uint32_t>(pc) : static_cast<uint32_t>(-static_cast<int64_t>(pc));
}

void emit_return_site(CodeWriter &w, bool abi_return, uint32_t hit_room, ReturnSiteFields *f) {
  if (abi_return) {
    emit_inline_link(w, kCmpRspSlotImm32, sizeof(kCmpRspSlotImm32), kJe8, hit_room, f);  // cmp [rsp]; je
    return;
  }
  w.push_reg(KJIT_REG_RCX);
  w.mov_reg_from_rsp_slot(KJIT_REG_RCX, 8);
  emit_inline_link(w, kLeaRcx, sizeof(kLeaRcx), kJrcxz, hit_room, f);  // lea rcx, [rcx - T]; jrcxz
}

uint32_t return_fallback_size(bool abi_return) { return abi_return ? 4 : 8; }

void emit_return_fallback(CodeWriter &w, bool abi_return) {
  if (abi_return) {
    // rcx is dead at every target: the return address in the slot stands
    // in for the program's rcx that the IBL or the gate pops.
    static const uint8_t kMovRcxRspSlot[] = {0x48, 0x8b, 0x0c, 0x24};  // mov rcx, [rsp]: no disp8
    w.bytes(kMovRcxRspSlot, sizeof(kMovRcxRspSlot));
    return;
  }
  w.mov_reg_from_rsp_slot(KJIT_REG_RCX, 8);  // 5 bytes: disp8
  w.pop_rsp_slot();
}

int32_t emit_predicted_return(CodeWriter &w, uint64_t pc, bool flags_dead, bool rcx_dead) {
  if (!chain_target_encodable(pc) || !(flags_dead || rcx_dead)) return -1;
  if (flags_dead) {
    w.bytes(kCmpRspSlotImm32, sizeof(kCmpRspSlotImm32));
    w.u32(static_cast<uint32_t>(pc));
    w.byte(kJe8);  // hit
  } else {
    w.mov_reg_from_rsp_slot(KJIT_REG_RCX, 0);
    w.bytes(kLeaRcx, sizeof(kLeaRcx));
    w.u32(static_cast<uint32_t>(-static_cast<int64_t>(pc)));
    w.byte(kJrcxz);  // hit
  }
  int32_t rel8 = static_cast<int32_t>(w.size());
  w.byte(0);
  return rel8;
}

}  // namespace kjit::arch
