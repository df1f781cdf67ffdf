/* SPDX-License-Identifier: GPL-2.0 */
// The indirect-branch lookup (IBL): a hash table from original address to
// translation, kept at the start of each epoch's code region, that
// translated code probes itself when an indirect site's predicated chain
// misses, without the engine lock and without leaving the cache.  Only
// when the table misses too does the site go to the dispatcher gate.
//
// Readers (translated code, kjit_engine_enter) never lock: an entry's
// translation is written before its pc, entries are never removed while
// the epoch is live (a retired translation's entry is re-pointed at its
// forwarder, then at the new translation: one aligned store each), and an
// epoch is reset only after quiescence.
#pragma once
#include "core/epoch.h"

namespace kjit {

struct IblEntry {
  uint64_t pc;    // 0 = empty
  uint64_t dest;  // translation, or pc itself for code that runs natively
};
constexpr uint32_t kIblProbes = 4;  // slots tried from the hash position

// Lays out the table and the shared lookup routine at the start of a freshly
// reset epoch (advances code_used).  Leaves the IBL off for caches too small
// to afford it.
void ibl_setup(Epoch &epoch);
// A new, empty table and routine at the end of the epoch's code (a new
// generation, epoch.h): translated code and entries already using the old
// ones go on using them.  False when there is no room.
bool ibl_renew(Epoch &epoch);
// Sets pc's entry to dest (a new one, or the one pc has).
void ibl_insert(Epoch &epoch, uint64_t pc, uint64_t dest);
// pc's entry, if it leads to `from`, now leads to `to`.  True if it did.
bool ibl_redirect(Epoch &epoch, uint64_t pc, uint64_t from, uint64_t to);
// The slot pc's probes start at.
uint32_t ibl_home(const Epoch &epoch, uint64_t pc);
// dest for pc, or 0.
uint64_t ibl_lookup(const Epoch &epoch, uint64_t pc);

}  // namespace kjit
