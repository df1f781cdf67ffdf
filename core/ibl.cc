// SPDX-License-Identifier: GPL-2.0
#include "core/ibl.h"

#include "arch/arch.h"
#include "core/engine_state.h"

namespace kjit {
namespace {

constexpr uint32_t kMinCodeForIbl = 16 * 1024;

// Multiplicative hashing: the high half of pc * kHashMul, masked.  Return
// addresses and branch targets crowd into a few pages of text; the product
// spreads every bit of pc over the index.
constexpr uint64_t kHashMul = 0x9e3779b97f4a7c15ull;
uint32_t hash_index(uint64_t pc, uint32_t mask) { return static_cast<uint32_t>((pc * kHashMul) >> 32) & mask; }

// The offset changes when the epoch renews (ibl_renew), under lock-free
// readers: the new table is complete and empty before it is published, and
// the old one stays intact for the code that still uses it.
IblEntry *table_of(const Epoch &e) {
  return reinterpret_cast<IblEntry *>(e.write_at(__atomic_load_n(&e.ibl_table_offset, __ATOMIC_ACQUIRE)));
}

uint32_t table_bytes(uint32_t mask) { return (mask + 1 + kIblProbes) * sizeof(IblEntry); }

// A zeroed table and its routine at `at` (64-aligned) of `e`'s code region;
// the routine's offset, or 0 when they do not fit.
uint32_t place_table(Epoch &e, uint32_t at, uint32_t mask) {
  uint32_t bytes = table_bytes(mask);
  uint64_t table_exec = e.exec_at(at);
  if (at + bytes > e.code_size || !arch::absolute_addressable(table_exec) ||
      !arch::absolute_addressable(table_exec + bytes)) return 0;
  __builtin_memset(e.write_at(at), 0, bytes);
  uint32_t start = (at + bytes + 63) & ~63u;
  if (start >= e.code_size) return 0;
  CodeWriter w(e.write_at(start), e.exec_at(start), e.code_size - start);
  arch::emit_ibl_routine(w, table_exec, mask, kHashMul, kIblProbes);
  if (w.overflowed()) return 0;
  e.code_used = start + w.size();
  return start;
}

}  // namespace

void ibl_setup(Epoch &e) {
  e.ibl_routine = 0;
  if (e.code_size < kMinCodeForIbl) return;
  uint32_t entries = 64;
  while (entries * 2 <= e.code_size / 256) entries *= 2;
  e.ibl_mask = entries - 1;
  e.ibl_table_offset = 0;
  e.ibl_routine = place_table(e, 0, e.ibl_mask);
  if (!e.ibl_routine) e.code_used = 0;
}

bool ibl_renew(Epoch &e) {
  if (!e.ibl_routine) return true;  // no IBL in this epoch: nothing to renew
  // The same size: a reader may pair the new offset with the mask it read.
  uint32_t used = e.code_used;
  uint32_t at = (e.code_used + 63) & ~63u;
  uint32_t routine = place_table(e, at, e.ibl_mask);
  if (!routine) {
    e.code_used = used;
    return false;
  }
  __atomic_store_n(&e.ibl_table_offset, at, __ATOMIC_RELEASE);
  e.ibl_routine = routine;
  return true;
}

void ibl_insert(Epoch &e, uint64_t pc, uint64_t dest) {
  if (!e.ibl_routine || pc == 0) return;
  IblEntry *t = table_of(e);
  uint32_t i = hash_index(pc, e.ibl_mask);
  for (uint32_t p = 0; p < kIblProbes; p++) {
    IblEntry &slot = t[i + p];
    if (slot.pc == pc) {
      // A retired translation's entry leads to its forwarder until the new
      // one replaces it (ibl_redirect); readers see one or the other.
      if (slot.dest != dest) __atomic_store_n(&slot.dest, dest, __ATOMIC_RELEASE);
      return;
    }
    if (slot.pc == 0) {
      slot.dest = dest;
      // Publish the translation before the key (readers load pc, then dest).
      __atomic_store_n(&slot.pc, pc, __ATOMIC_RELEASE);
      return;
    }
  }
  // All probe slots taken: this target keeps using the dispatcher.
  g_engine.stats.ibl_full++;
}

bool ibl_redirect(Epoch &e, uint64_t pc, uint64_t from, uint64_t to) {
  if (!e.ibl_routine) return false;
  IblEntry *t = table_of(e);
  uint32_t i = hash_index(pc, e.ibl_mask);
  for (uint32_t p = 0; p < kIblProbes; p++) {
    IblEntry &slot = t[i + p];
    if (slot.pc != pc) continue;
    if (slot.dest != from) return false;
    __atomic_store_n(&slot.dest, to, __ATOMIC_RELEASE);
    return true;
  }
  return false;
}

uint32_t ibl_home(const Epoch &e, uint64_t pc) { return hash_index(pc, e.ibl_mask); }

uint64_t ibl_lookup(const Epoch &e, uint64_t pc) {
  if (!e.ibl_routine) return 0;
  const IblEntry *t = table_of(e);
  uint32_t i = hash_index(pc, e.ibl_mask);
  for (uint32_t p = 0; p < kIblProbes; p++)
    if (__atomic_load_n(&t[i + p].pc, __ATOMIC_ACQUIRE) == pc) return t[i + p].dest;
  return 0;
}

}  // namespace kjit
