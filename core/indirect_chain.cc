// SPDX-License-Identifier: GPL-2.0
#include "core/indirect_chain.h"

#include "arch/x86/code_writer.h"
#include "core/departures.h"
#include "core/engine_state.h"

namespace kjit {
namespace {

// Claims the link written by `w` at `start` and publishes it: the previous
// tail now leads to it.  `next_field`: the link's own jmp toward the
// fallback, the chain's new tail.
bool publish_link(Epoch &epoch, ChainSite *site, uint32_t start, x86::CodeWriter &w, int32_t next_field) {
  if (w.overflowed() || next_field < 0) return false;
  epoch.code_used += w.size();
  kjit_os_code_written(epoch.exec_at(start), w.size());
  if (!x86::patch_rel32_live(epoch.write_at(site->tail_field), epoch.exec_at(site->tail_field),
                             epoch.exec_at(start)))
    return false;
  kjit_os_code_written(epoch.exec_at(site->tail_field), 4);
  site->tail_field = start + static_cast<uint32_t>(next_field);
  site->links++;
  g_engine.stats.chain_links++;
  return true;
}

constexpr uint8_t kLeaRcx[] = {0x48, 0x8d, 0x89};  // lea rcx, [rcx + disp32]

// Writes a link's compare at `w`: target `pc` in rcx or the next link.
// Returns the rel32 offset of its jmp toward the fallback (the chain's new
// tail), or -1; the hit's code follows.
int32_t emit_compare(Epoch &epoch, const ChainSite *site, x86::CodeWriter &w, uint64_t pc) {
  w.bytes(kLeaRcx, sizeof(kLeaRcx));
  w.u32(static_cast<uint32_t>(-static_cast<int64_t>(pc)));
  w.byte(0xe3);  // jrcxz hit: over the restore and the (padded) jmp
  uint32_t skip_at = w.size();
  w.byte(0);
  w.bytes(kLeaRcx, sizeof(kLeaRcx));
  w.u32(static_cast<uint32_t>(pc));
  // The next append re-points this jmp while other CPUs may run it.
  int32_t next_field = w.jmp_patchable(epoch.exec_at(site->fallback));
  if (!w.overflowed()) *w.write_ptr(skip_at) = static_cast<uint8_t>(w.size() - (skip_at + 1));
  return next_field;
}

bool encodable(uint64_t pc) { return x86::fits_i32(-static_cast<int64_t>(pc)) && x86::fits_simm32(pc); }

// The hit's jump at code-region offset `field` now reaches `target`.
void note_incoming(Block *target, LinkRef *ref, uint32_t field) {
  if (!target) return;
  ref->field_offset = field;
  ref->next = target->incoming_links;
  target->incoming_links = ref;
}

// Writes a return link's compare at `w`: rcx holds the return address less
// the previous link's target, and is left so for the next link; the site's
// fallback loads the return address again.  Returns the rel32 offset of
// its jmp toward the fallback, or -1; the hit's code follows.
int32_t emit_return_compare(Epoch &epoch, const ChainSite *site, x86::CodeWriter &w, uint64_t pc) {
  w.bytes(kLeaRcx, sizeof(kLeaRcx));
  w.u32(static_cast<uint32_t>(site->last_target - pc));
  w.byte(0xe3);  // jrcxz hit: over the (padded) jmp
  uint32_t skip_at = w.size();
  w.byte(0);
  int32_t next_field = w.jmp_patchable(epoch.exec_at(site->fallback));
  if (!w.overflowed()) *w.write_ptr(skip_at) = static_cast<uint8_t>(w.size() - (skip_at + 1));
  return next_field;
}

constexpr uint8_t kCmpRspSlotImm32[] = {0x48, 0x81, 0x3c, 0x24};  // cmp qword [rsp], imm32

// An ABI return site's later link: the slot compared with pc itself.
// Returns the rel32 offset of its jmp toward the fallback, or -1; the hit's
// code follows.
int32_t emit_abi_return_compare(Epoch &epoch, const ChainSite *site, x86::CodeWriter &w, uint64_t pc) {
  w.bytes(kCmpRspSlotImm32, sizeof(kCmpRspSlotImm32));
  w.u32(static_cast<uint32_t>(pc));
  w.byte(0x74);  // je hit: over the (padded) jmp
  uint32_t skip_at = w.size();
  w.byte(0);
  int32_t next_field = w.jmp_patchable(epoch.exec_at(site->fallback));
  if (!w.overflowed()) *w.write_ptr(skip_at) = static_cast<uint8_t>(w.size() - (skip_at + 1));
  return next_field;
}

constexpr uint32_t kInlineHitRoom = 16;            // pop, pushf, lock inc [abs32], popf, ret

// A return link's hit: the program's rcx back, then the translation with
// the return slot dropped, or the native return counted.
bool emit_return_hit(x86::CodeWriter &w, const ChainSite *site, uint64_t pc, uint64_t translation,
                     kjit_departure why, bool flags_dead, int32_t *jump_field) {
  if (site->abi_return) flags_dead = true;  // its compare wrote them already
  else w.pop_reg(KJIT_REG_RCX);             // the return slot is on top again
  if (translation) {
    w.lea_rsp(8);
    // Re-pointed if the translation is retired (unlink_incoming).
    *jump_field = w.jmp_patchable(translation);
    return *jump_field >= 0;
  }
  // The original return: the stack top is pc, and the return-stack
  // predictor pairs it with the native call that entered.  Only this hit's
  // path goes to pc, so pc's liveness decides about the flags.
  // This code runs with the kernel's GS base: the dispatcher, which uses
  // it, was reached from here when the link was made.
  emit_departure_count(w, pc, why, !flags_dead, true);
  w.ret();
  return !w.overflowed();
}

// The site's own first link gets its target: the hit's code while nothing
// can reach it (the compare's disp32 is 0, which no return address
// matches), then the disp32; the site's misses go to the IBL from now on,
// as after any link.
bool inline_link(Epoch &epoch, ChainSite *site, uint64_t pc, Block *target, kjit_departure why,
                 bool flags_dead) {
  x86::CodeWriter w(epoch.write_at(site->inline_hit), epoch.exec_at(site->inline_hit), kInlineHitRoom);
  LinkRef *ref = target ? epoch.arena.alloc_array<LinkRef>(1) : nullptr;
  int32_t jump_field = -1;
  if ((target && !ref) || !emit_return_hit(w, site, pc, target ? target->exec : 0, why, flags_dead, &jump_field) ||
      w.overflowed())
    return false;
  note_incoming(target, ref, site->inline_hit + static_cast<uint32_t>(jump_field));
  kjit_os_code_written(epoch.exec_at(site->inline_hit), w.size());
  // `lea rcx, [rcx - pc]`, or `cmp qword [rsp], pc` in an ABI return site.
  const uint32_t operand = site->abi_return ? static_cast<uint32_t>(pc) : static_cast<uint32_t>(-static_cast<int64_t>(pc));
  __atomic_store_n(reinterpret_cast<uint32_t *>(epoch.write_at(site->inline_compare)), operand,
                   __ATOMIC_RELEASE);
  kjit_os_code_written(epoch.exec_at(site->inline_compare), 4);
  if (epoch.ibl_routine &&
      x86::patch_rel32_live(epoch.write_at(site->tail_field), epoch.exec_at(site->tail_field),
                            epoch.exec_at(site->fallback)))
    kjit_os_code_written(epoch.exec_at(site->tail_field), 4);
  site->links++;
  site->last_target = pc;
  g_engine.stats.chain_links++;
  return true;
}

}  // namespace

int32_t emit_predicted_return(x86::CodeWriter &w, uint64_t pc, bool flags_dead, bool rcx_dead) {
  if (!encodable(pc) || !(flags_dead || rcx_dead)) return -1;
  if (flags_dead) {
    w.bytes(kCmpRspSlotImm32, sizeof(kCmpRspSlotImm32));
    w.u32(static_cast<uint32_t>(pc));
    w.byte(0x74);  // je hit
  } else {
    w.mov_reg_from_rsp_slot(KJIT_REG_RCX, 0);
    w.bytes(kLeaRcx, sizeof(kLeaRcx));
    w.u32(static_cast<uint32_t>(-static_cast<int64_t>(pc)));
    w.byte(0xe3);  // jrcxz hit
  }
  int32_t rel8 = static_cast<int32_t>(w.size());
  w.byte(0);
  return rel8;
}

uint32_t return_fallback_size(const ChainSite &site) {
  if (!site.is_return) return 0;
  return site.abi_return ? 4 : 8;
}

void emit_return_fallback(x86::CodeWriter &w, const ChainSite &site) {
  if (!site.is_return) return;
  if (site.abi_return) {
    // rcx is dead at every target: the return address in the slot stands
    // in for the program's rcx that the IBL or the gate pops.
    static const uint8_t kMovRcxRspSlot[] = {0x48, 0x8b, 0x0c, 0x24};  // mov rcx, [rsp]: no disp8
    w.bytes(kMovRcxRspSlot, sizeof(kMovRcxRspSlot));
    return;
  }
  w.mov_reg_from_rsp_slot(KJIT_REG_RCX, 8);  // 5 bytes: disp8
  w.pop_rsp_slot();
}

namespace {

// A return site's own first link: `opcode operand32; jcc hit; jmp next`,
// then the room for its hit.  The operand (0 until the first target,
// matching no kernel address) is stored while other CPUs may run the site:
// CS prefixes put it on a 4-byte boundary (ignored on a lea, and on a
// memory operand in 64-bit mode).
void emit_inline_link(x86::CodeWriter &w, uint32_t at, ChainSite *site, const uint8_t *opcode,
                      uint32_t opcode_len, uint8_t jcc) {
  w.branch_padding(w.patch_pad(opcode_len));
  w.bytes(opcode, opcode_len);
  site->inline_compare = at + w.size();
  w.u32(0);
  w.byte(jcc);
  uint32_t skip_at = w.size();
  w.byte(0);
  int32_t tail = w.jmp_patchable(w.here());  // to the stubs, then the next link
  site->tail_field = at + static_cast<uint32_t>(tail < 0 ? 0 : tail);
  if (!w.overflowed()) *w.write_ptr(skip_at) = static_cast<uint8_t>(w.size() - (skip_at + 1));
  site->inline_hit = at + w.size();
  for (uint32_t i = 0; i < kInlineHitRoom; i++) w.byte(0xcc);
}

}  // namespace

void emit_return_site(x86::CodeWriter &w, uint32_t at, ChainSite *site) {
  if (site->abi_return) {
    emit_inline_link(w, at, site, kCmpRspSlotImm32, sizeof(kCmpRspSlotImm32), 0x74);  // cmp [rsp]; je
    return;
  }
  w.push_reg(KJIT_REG_RCX);
  w.mov_reg_from_rsp_slot(KJIT_REG_RCX, 8);
  emit_inline_link(w, at, site, kLeaRcx, sizeof(kLeaRcx), 0xe3);  // lea rcx, [rcx - T]; jrcxz
}

bool chain_append(Epoch &epoch, ChainSite *site, uint64_t pc, Block *target, uint64_t dest) {
  if (site->links >= g_engine.opt.max_chain_length || !encodable(pc)) return false;
  LinkRef *ref = target ? epoch.arena.alloc_array<LinkRef>(1) : nullptr;
  if (target && !ref) return false;
  uint32_t start = epoch.code_used;
  x86::CodeWriter w(epoch.write_at(start), epoch.exec_at(start), epoch.code_size - start);
  int32_t next_field = emit_compare(epoch, site, w, pc);
  w.pop_reg(KJIT_REG_RCX);
  // A translation's jump is re-pointed if it is retired (unlink_incoming).
  int32_t jump_field = target ? w.jmp_patchable(target->exec) : w.jmp(dest);
  if (jump_field < 0 || !publish_link(epoch, site, start, w, next_field)) return false;
  note_incoming(target, ref, start + static_cast<uint32_t>(jump_field));
  return true;
}

bool return_link_append(Epoch &epoch, ChainSite *site, uint64_t pc, Block *target, kjit_departure why,
                        bool flags_dead) {
  if (site->links >= g_engine.opt.max_chain_length || !encodable(pc)) return false;
  if (site->inline_compare && site->links == 0) return inline_link(epoch, site, pc, target, why, flags_dead);
  if (!site->abi_return && !x86::fits_i32(static_cast<int64_t>(site->last_target - pc))) return false;
  LinkRef *ref = target ? epoch.arena.alloc_array<LinkRef>(1) : nullptr;
  if (target && !ref) return false;
  uint32_t start = epoch.code_used;
  x86::CodeWriter w(epoch.write_at(start), epoch.exec_at(start), epoch.code_size - start);
  int32_t next_field = site->abi_return ? emit_abi_return_compare(epoch, site, w, pc)
                                        : emit_return_compare(epoch, site, w, pc);
  int32_t jump_field = -1;
  if (!emit_return_hit(w, site, pc, target ? target->exec : 0, why, flags_dead, &jump_field)) return false;
  if (!publish_link(epoch, site, start, w, next_field)) return false;
  note_incoming(target, ref, start + static_cast<uint32_t>(jump_field));
  site->last_target = pc;
  return true;
}

void chain_skip_to_ibl(Epoch &epoch, ChainSite *site) {
  if (site->links || !epoch.ibl_routine) return;
  if (!x86::patch_rel32_live(epoch.write_at(site->tail_field), epoch.exec_at(site->tail_field),
                             epoch.exec_at(site->fallback)))
    return;
  kjit_os_code_written(epoch.exec_at(site->tail_field), 4);
}

}  // namespace kjit
