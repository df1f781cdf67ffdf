// SPDX-License-Identifier: GPL-2.0
#include "core/indirect_chain.h"

#include "core/departures.h"
#include "core/engine_state.h"

namespace kjit {
namespace {

// Claims the link written by `w` at `start` and publishes it: the previous
// tail now leads to it.  `next_field`: the link's own jmp toward the
// fallback, the chain's new tail.
bool publish_link(Epoch &epoch, ChainSite *site, uint32_t start, CodeWriter &w, int32_t next_field) {
  if (w.overflowed() || next_field < 0) return false;
  epoch.code_used += w.size();
  kjit_os_code_written(epoch.exec_at(start), w.size());
  if (!arch::patch_jump_live(epoch.write_at(site->tail_field), epoch.exec_at(site->tail_field),
                              epoch.exec_at(start)))
    return false;
  kjit_os_code_written(epoch.exec_at(site->tail_field), 4);
  site->tail_field = start + static_cast<uint32_t>(next_field);
  site->links++;
  g_engine.stats.chain_links++;
  return true;
}

// The hit's jump at code-region offset `field` now reaches `target`.
void note_incoming(Block *target, LinkRef *ref, uint32_t field) {
  if (!target) return;
  ref->field_offset = field;
  ref->next = target->incoming_links;
  target->incoming_links = ref;
}

constexpr uint32_t kInlineHitRoom = 16;            // pop, pushf, lock inc [abs32], popf, ret

// A return link's hit: the program's rcx back, then the translation with
// the return slot dropped, or the native return counted.
bool emit_return_hit(CodeWriter &w, const ChainSite *site, uint64_t pc, uint64_t translation,
                     kjit_departure why, bool flags_dead, int32_t *jump_field) {
  if (site->abi_return) flags_dead = true;  // its compare wrote them already
  arch::emit_return_hit_restore(w, site->abi_return);
  if (translation) {
    arch::emit_drop_return_slot(w);
    // Re-pointed if the translation is retired (unlink_incoming).
    *jump_field = arch::emit_jump(w, translation, true);
    return *jump_field >= 0;
  }
  // The original return: the stack top is pc, and the return-stack
  // predictor pairs it with the native call that entered.  Only this hit's
  // path goes to pc, so pc's liveness decides about the flags.
  // This code runs with the kernel's GS base: the dispatcher, which uses
  // it, was reached from here when the link was made.
  emit_departure_count(w, pc, why, !flags_dead, true);
  arch::emit_native_return(w);
  return !w.overflowed();
}

// The site's own first link gets its target: the hit's code while nothing
// can reach it (the compare's disp32 is 0, which no return address
// matches), then the disp32; the site's misses go to the IBL from now on,
// as after any link.
bool inline_link(Epoch &epoch, ChainSite *site, uint64_t pc, Block *target, kjit_departure why,
                 bool flags_dead) {
  CodeWriter w(epoch.write_at(site->inline_hit), epoch.exec_at(site->inline_hit), kInlineHitRoom);
  LinkRef *ref = target ? epoch.arena.alloc_array<LinkRef>(1) : nullptr;
  int32_t jump_field = -1;
  if ((target && !ref) || !emit_return_hit(w, site, pc, target ? target->exec : 0, why, flags_dead, &jump_field) ||
      w.overflowed())
    return false;
  note_incoming(target, ref, site->inline_hit + static_cast<uint32_t>(jump_field));
  kjit_os_code_written(epoch.exec_at(site->inline_hit), w.size());
  const uint32_t operand = arch::return_compare_operand(pc, site->abi_return);
  __atomic_store_n(reinterpret_cast<uint32_t *>(epoch.write_at(site->inline_compare)), operand,
                   __ATOMIC_RELEASE);
  kjit_os_code_written(epoch.exec_at(site->inline_compare), 4);
  if (epoch.ibl_routine &&
      arch::patch_jump_live(epoch.write_at(site->tail_field), epoch.exec_at(site->tail_field),
                            epoch.exec_at(site->fallback)))
    kjit_os_code_written(epoch.exec_at(site->tail_field), 4);
  site->links++;
  site->last_target = pc;
  g_engine.stats.chain_links++;
  return true;
}

}  // namespace

int32_t emit_predicted_return(CodeWriter &w, uint64_t pc, bool flags_dead, bool rcx_dead) {
  return arch::emit_predicted_return(w, pc, flags_dead, rcx_dead);
}

uint32_t return_fallback_size(const ChainSite &site) {
  return site.is_return ? arch::return_fallback_size(site.abi_return) : 0;
}

void emit_return_fallback(CodeWriter &w, const ChainSite &site) {
  if (site.is_return) arch::emit_return_fallback(w, site.abi_return);
}

void emit_return_site(CodeWriter &w, uint32_t at, ChainSite *site) {
  arch::ReturnSiteFields f;
  arch::emit_return_site(w, site->abi_return, kInlineHitRoom, &f);
  site->inline_compare = at + f.compare;
  site->tail_field = at + f.tail;
  site->inline_hit = at + f.hit;
}

bool chain_append(Epoch &epoch, ChainSite *site, uint64_t pc, Block *target, uint64_t dest) {
  if (site->links >= g_engine.opt.max_chain_length || !arch::chain_target_encodable(pc)) return false;
  LinkRef *ref = target ? epoch.arena.alloc_array<LinkRef>(1) : nullptr;
  if (target && !ref) return false;
  uint32_t start = epoch.code_used;
  CodeWriter w(epoch.write_at(start), epoch.exec_at(start), epoch.code_size - start);
  int32_t next_field = arch::emit_chain_compare(w, pc, epoch.exec_at(site->fallback));
  arch::emit_chain_hit_restore(w);
  // A translation's jump is re-pointed if it is retired (unlink_incoming).
  int32_t jump_field = target ? arch::emit_jump(w, target->exec, true) : arch::emit_jump(w, dest, false);
  if (jump_field < 0 || !publish_link(epoch, site, start, w, next_field)) return false;
  note_incoming(target, ref, start + static_cast<uint32_t>(jump_field));
  return true;
}

bool return_link_append(Epoch &epoch, ChainSite *site, uint64_t pc, Block *target, kjit_departure why,
                        bool flags_dead) {
  if (site->links >= g_engine.opt.max_chain_length || !arch::chain_target_encodable(pc)) return false;
  if (site->inline_compare && site->links == 0) return inline_link(epoch, site, pc, target, why, flags_dead);
  if (!site->abi_return && !arch::return_compare_encodable(pc, site->last_target)) return false;
  LinkRef *ref = target ? epoch.arena.alloc_array<LinkRef>(1) : nullptr;
  if (target && !ref) return false;
  uint32_t start = epoch.code_used;
  CodeWriter w(epoch.write_at(start), epoch.exec_at(start), epoch.code_size - start);
  int32_t next_field = site->abi_return ? arch::emit_abi_return_compare(w, pc, epoch.exec_at(site->fallback))
                                        : arch::emit_return_compare(w, pc, site->last_target,
                                                                    epoch.exec_at(site->fallback));
  int32_t jump_field = -1;
  if (!emit_return_hit(w, site, pc, target ? target->exec : 0, why, flags_dead, &jump_field)) return false;
  if (!publish_link(epoch, site, start, w, next_field)) return false;
  note_incoming(target, ref, start + static_cast<uint32_t>(jump_field));
  site->last_target = pc;
  return true;
}

void chain_skip_to_ibl(Epoch &epoch, ChainSite *site) {
  if (site->links || !epoch.ibl_routine) return;
  if (!arch::patch_jump_live(epoch.write_at(site->tail_field), epoch.exec_at(site->tail_field),
                             epoch.exec_at(site->fallback)))
    return;
  kjit_os_code_written(epoch.exec_at(site->tail_field), 4);
}

}  // namespace kjit
