/* SPDX-License-Identifier: GPL-2.0 */
/* An open-addressing index from a code address to its entry in a table a
 * plugin owns, for the tables keyed by address (bbcount's blocks,
 * branch_profile's branches).  Every entry starts with its uint64_t pc.
 *
 * There is one writer: plugins add entries from on_block / on_insn, which
 * run at build time under the engine lock.  Readers (result accessors,
 * another CPU) take only the entries below `used`, published with release
 * order after the entry is filled.  The index has at least twice as many
 * slots as the table has entries, so a free slot is always reached and
 * probes stay short. */
#ifndef KJIT_PC_INDEX_H
#define KJIT_PC_INDEX_H
#include "kjit/types.h"

struct kjit_pc_index {
  uint32_t *slots;     /* entry index + 1, 0 = free */
  uint32_t mask;       /* slots - 1 */
  uint32_t max;        /* entries the table holds; 0: no table */
  uint32_t used;       /* entries filled */
};

/* Sets up `x` over `slots` (nslots a power of two); max is 0 (every lookup
 * fails) when there are fewer than 2 * max_entries slots. */
static inline void kjit_pc_index_init(struct kjit_pc_index *x, uint32_t *slots, uint32_t nslots,
                                      uint32_t max_entries) {
  x->slots = slots;
  x->mask = nslots ? nslots - 1 : 0;
  x->max = slots && nslots >= 2 * (uint64_t)max_entries ? max_entries : 0;
  x->used = 0;
}

/* The smallest power of two with room for 2 * max_entries slots. */
static inline uint32_t kjit_pc_index_slots_for(uint32_t max_entries) {
  uint32_t n = 1;
  while (n < 2 * (uint64_t)max_entries && n < (1u << 31)) n <<= 1;
  return n;
}

static inline uint64_t kjit_pc_index_pc(const void *entries, uint64_t stride, uint32_t i) {
  return *(const uint64_t *)((const char *)entries + (uint64_t)i * stride);
}

/* The index of pc's entry in `entries` (stride bytes each).  When pc has
 * none: x->used, and *new_slot is the slot to give it; the caller fills
 * entry x->used (pc first) and calls kjit_pc_index_add(x, *new_slot).  -1
 * when pc has none and the table is full. */
static inline int64_t kjit_pc_index_find(const struct kjit_pc_index *x, uint64_t pc,
                                         const void *entries, uint64_t stride, uint32_t *new_slot) {
  if (!x->max) return -1;
  for (uint32_t s = (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 32) & x->mask;; s = (s + 1) & x->mask) {
    uint32_t i = x->slots[s];
    if (!i) {
      if (x->used == x->max) return -1;
      *new_slot = s;
      return x->used;
    }
    if (kjit_pc_index_pc(entries, stride, i - 1) == pc) return i - 1;
  }
}

/* Publishes entry x->used, now filled, under `slot`. */
static inline void kjit_pc_index_add(struct kjit_pc_index *x, uint32_t slot) {
  x->slots[slot] = x->used + 1;
  __atomic_store_n(&x->used, x->used + 1, __ATOMIC_RELEASE);
}

static inline uint32_t kjit_pc_index_count(const struct kjit_pc_index *x) {
  return __atomic_load_n(&x->used, __ATOMIC_ACQUIRE);
}

#endif
