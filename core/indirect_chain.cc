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

constexpr uint8_t kCondNotEqual = 0x5;

}  // namespace

bool chain_append(Epoch &epoch, ChainSite *site, uint64_t pc, uint64_t dest) {
  if (site->links >= g_engine.opt.max_chain_length) return false;
  int64_t minus = -static_cast<int64_t>(pc);
  if (!x86::fits_i32(minus) || !x86::fits_simm32(pc)) return false;
  uint32_t start = epoch.code_used;
  x86::CodeWriter w(epoch.write_at(start), epoch.exec_at(start), epoch.code_size - start);
  const uint8_t lea_rcx[] = {0x48, 0x8d, 0x89};  // lea rcx, [rcx + disp32]
  w.bytes(lea_rcx, 3);
  w.u32(static_cast<uint32_t>(minus));
  w.byte(0xe3);  // jrcxz hit: over the restore and the (padded) jmp
  uint32_t skip_at = w.size();
  w.byte(0);
  w.bytes(lea_rcx, 3);
  w.u32(static_cast<uint32_t>(pc));
  // The next append re-points this jmp while other CPUs may run it.
  int32_t next_field = w.jmp_patchable(epoch.exec_at(site->fallback));
  if (!w.overflowed()) *w.write_ptr(skip_at) = static_cast<uint8_t>(w.size() - (skip_at + 1));
  w.pop_reg(KJIT_REG_RCX);
  if (w.jmp(dest) < 0) return false;
  return publish_link(epoch, site, start, w, next_field);
}

bool return_link_append(Epoch &epoch, ChainSite *site, uint64_t pc, uint64_t translation,
                        kjit_departure why, bool flags_dead) {
  if (site->links >= g_engine.opt.max_chain_length) return false;
  int64_t minus = -static_cast<int64_t>(pc);
  if (!x86::fits_i32(minus) || !x86::fits_simm32(pc)) return false;
  uint32_t start = epoch.code_used;
  x86::CodeWriter w(epoch.write_at(start), epoch.exec_at(start), epoch.code_size - start);
  int32_t next_field;
  if (flags_dead) {
    w.cmp_rsp_slot_imm32(static_cast<uint32_t>(pc));
    // The next append re-points this jcc while other CPUs may run it.
    next_field = w.jcc_patchable(kCondNotEqual, epoch.exec_at(site->fallback));
    if (translation) w.lea_rsp(8);
  } else {
    // Compared in rcx, as at other sites, with the return slot swapped in
    // and back on a miss.
    const uint8_t lea_rcx[] = {0x48, 0x8d, 0x89};  // lea rcx, [rcx + disp32]
    w.xchg_reg_rsp_slot(KJIT_REG_RCX);
    w.bytes(lea_rcx, 3);
    w.u32(static_cast<uint32_t>(minus));
    w.byte(0xe3);  // jrcxz hit
    uint32_t skip_at = w.size();
    w.byte(0);
    w.bytes(lea_rcx, 3);
    w.u32(static_cast<uint32_t>(pc));
    w.xchg_reg_rsp_slot(KJIT_REG_RCX);
    next_field = w.jmp_patchable(epoch.exec_at(site->fallback));
    if (!w.overflowed()) *w.write_ptr(skip_at) = static_cast<uint8_t>(w.size() - (skip_at + 1));
    if (translation) {
      w.pop_reg(KJIT_REG_RCX);  // the program's rcx; the return slot is dropped
    } else {
      w.bytes(lea_rcx, 3);      // rcx = pc again, swapped back into the slot
      w.u32(static_cast<uint32_t>(pc));
      w.xchg_reg_rsp_slot(KJIT_REG_RCX);
    }
  }
  if (translation) {
    if (w.jmp(translation) < 0) return false;
  } else {
    // The original return: the stack top is pc, and the return-stack
    // predictor pairs it with the native call that entered.
    emit_departure_count(w, pc, why, !flags_dead);
    w.ret();
  }
  return publish_link(epoch, site, start, w, next_field);
}

void chain_skip_to_ibl(Epoch &epoch, ChainSite *site) {
  if (site->links || !epoch.ibl_routine) return;
  if (!x86::patch_rel32_live(epoch.write_at(site->tail_field), epoch.exec_at(site->tail_field),
                             epoch.exec_at(site->fallback)))
    return;
  kjit_os_code_written(epoch.exec_at(site->tail_field), 4);
}

}  // namespace kjit
