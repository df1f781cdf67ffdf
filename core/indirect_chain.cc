#include "core/indirect_chain.h"

#include "arch/x86/code_writer.h"
#include "core/engine_state.h"

namespace kjit {

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
  int32_t hit_field = w.jmp(dest);
  if (w.overflowed() || next_field < 0 || hit_field < 0) return false;
  epoch.code_used += w.size();
  kjit_os_code_written(epoch.exec_at(start), w.size());
  // Publish: the previous tail now leads to the new link.
  if (!x86::patch_rel32_live(epoch.write_at(site->tail_field), epoch.exec_at(site->tail_field),
                             epoch.exec_at(start)))
    return false;
  kjit_os_code_written(epoch.exec_at(site->tail_field), 4);
  site->tail_field = start + static_cast<uint32_t>(next_field);
  site->links++;
  g_engine.stats.chain_links++;
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
