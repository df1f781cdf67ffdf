// SPDX-License-Identifier: GPL-2.0
#include "core/linker.h"

#include "core/departures.h"
#include "core/engine_state.h"

namespace kjit {

static bool patch(Epoch &epoch, uint32_t field, uint64_t target) {
  if (!arch::patch_jump_live(epoch.write_at(field), epoch.exec_at(field), target)) return false;
  kjit_os_code_written(epoch.exec_at(field), 4);
  return true;
}

bool link_exit(Epoch &epoch, Exit *exit, Block *target) {
  if (exit->linked) return true;
  if (!patch(epoch, exit->field_offset, target->exec)) return false;
  exit->linked = 1;
  exit->next_incoming = target->incoming_exits;
  target->incoming_exits = exit;
  g_engine.stats.direct_links++;
  return true;
}

bool unlink_incoming(Epoch &epoch, Block *block, uint64_t forward) {
  bool all = true;
  for (Exit *e = block->incoming_exits; e; e = e->next_incoming) {
    // Back on its stub: the dispatcher links it to the new translation the
    // next time it is taken.
    if (patch(epoch, e->field_offset, epoch.exec_at(e->stub_offset))) e->linked = 0;
    else all = false;
  }
  block->incoming_exits = nullptr;
  for (LinkRef *l = block->incoming_links; l; l = l->next) all &= patch(epoch, l->field_offset, forward);
  block->incoming_links = nullptr;
  return all;
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
