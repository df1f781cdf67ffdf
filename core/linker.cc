// SPDX-License-Identifier: GPL-2.0
#include "core/linker.h"

#include "arch/x86/code_writer.h"
#include "core/departures.h"
#include "core/engine_state.h"

namespace kjit {

static bool patch(Epoch &epoch, uint32_t field, uint64_t target) {
  if (!x86::patch_rel32_live(epoch.write_at(field), epoch.exec_at(field), target)) return false;
  kjit_os_code_written(epoch.exec_at(field), 4);
  return true;
}

bool link_exit(Epoch &epoch, Exit *exit, Block *target) {
  if (exit->linked) return true;
  if (!patch(epoch, exit->field_offset, target->exec)) return false;
  exit->linked = 1;
  g_engine.stats.direct_links++;
  return true;
}

bool link_exit_native(Epoch &epoch, Exit *exit, kjit_departure why) {
  if (exit->linked) return true;
  uint64_t dest = native_exit_trampoline(epoch, exit->target_pc, why, true);
  // No room for a trampoline: the exit stays on its stub, where the
  // dispatcher counts each departure, rather than leave uncounted.
  if (dest == exit->target_pc && g_engine.departures) return false;
  if (!patch(epoch, exit->field_offset, dest)) return false;
  exit->linked = 1;
  return true;
}

void link_waiting(Epoch &epoch, TableSlot *slot, Block *block) {
  Exit *e = slot->waiting;
  slot->waiting = nullptr;
  while (e) {
    Exit *next = e->next_waiting;
    e->next_waiting = nullptr;
    link_exit(epoch, e, block);
    e = next;
  }
}

}  // namespace kjit
