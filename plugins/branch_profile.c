// SPDX-License-Identifier: GPL-2.0
/* Per conditional branch: how often it was taken and how often it fell
 * through, with the block counts of bbcount alongside (the same counters,
 * so one recording gives line coverage and branch coverage together).
 *
 * Each conditional branch gets an entry keyed by its address (pc_index.h),
 * created when a block ending in it is first built and kept across
 * flushes; its two counters are incremented on the branch's taken and
 * not-taken edges, which run after the branch has decided.  Counters are
 * per-CPU when the per-CPU window holds two u64 per possible entry
 * (kjit.ko: percpu_kb), else shared and incremented with a locked add:
 * exact on SMP either way.  A branch that finds the table full is counted
 * in `dropped` and not instrumented; the report says so. */
#include "kjit_examples.h"
#include "pc_index.h"

static struct kjit_branch_entry *entries;
static struct kjit_pc_index branch_index;
static uint64_t *percpu_counts; /* per entry: taken, not taken, per CPU; NULL: in the entry */
static uint64_t dropped;        /* branch translations that got no counters */

static void inc(uint64_t *counter) { (*counter)++; }
static void inc_shared(uint64_t *counter) { __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }

static struct kjit_branch_entry *entry_for(struct kjit_insn *jcc) {
  uint64_t pc = kjit_insn_pc(jcc);
  uint32_t slot = 0;
  int64_t i = kjit_pc_index_find(&branch_index, pc, entries, sizeof(*entries), &slot);
  if (i < 0) return 0;
  if ((uint32_t)i == branch_index.used) {
    struct kjit_branch_entry *e = &entries[i];
    e->pc = pc;
    e->target = kjit_insn_branch_target(jcc);
    e->taken = 0;
    e->not_taken = 0;
    kjit_pc_index_add(&branch_index, slot);
  }
  return &entries[i];
}

static void instrument_block(struct kjit_block *block, void *arg) {
  kjit_example_bbcount()->on_block(block, arg);
  uint32_t n = kjit_block_insn_count(block);
  struct kjit_insn *last = kjit_block_insn(block, n - 1);
  if (!kjit_insn_is_conditional(last)) return;
  struct kjit_branch_entry *e = entry_for(last);
  if (!e) {
    __atomic_store_n(&dropped, dropped + 1, __ATOMIC_RELAXED);
    return;
  }
  uint64_t *taken = &e->taken, *not_taken = &e->not_taken;
  void (*bump)(uint64_t *) = inc_shared;
  if (percpu_counts) {
    taken = &percpu_counts[2 * (e - entries)];
    not_taken = taken + 1;
    bump = inc;
  }
  kjit_insert_call(last, KJIT_IPOINT_TAKEN, (void *)bump, 1, KJIT_ARG_PTR(taken));
  kjit_insert_call(last, KJIT_IPOINT_NOT_TAKEN, (void *)bump, 1, KJIT_ARG_PTR(not_taken));
}

/* bbcount's runs are per translation: it hears of dropped blocks and reset halves too. */
static void drop_block(struct kjit_block *block, void *arg) { kjit_example_bbcount()->on_block_dropped(block, arg); }
static void reset_half(uint32_t half, void *arg) { kjit_example_bbcount()->on_cache_reset(half, arg); }

static const struct kjit_plugin branch_profile_plugin = {
    .name = "branch_profile",
    .on_block = instrument_block,
    .on_block_dropped = drop_block,
    .on_cache_reset = reset_half,
};

int kjit_branch_profile_init(uint32_t max_branches, uint32_t max_blocks) {
  /* bbcount's table, then the branches', then bbcount's runs in what is left */
  int ret = kjit_bbcount_init_runs(max_blocks, 0);
  if (ret) return ret;
  uint32_t nslots = kjit_pc_index_slots_for(max_branches);
  entries = (struct kjit_branch_entry *)kjit_alloc(sizeof(*entries) * (uint64_t)max_branches);
  percpu_counts =
      max_branches ? (uint64_t *)kjit_alloc_percpu(2 * sizeof(*percpu_counts) * (uint64_t)max_branches) : 0;
  kjit_pc_index_init(&branch_index, entries ? (uint32_t *)kjit_alloc(sizeof(uint32_t) * (uint64_t)nslots) : 0,
                     nslots, max_branches);
  dropped = 0;
  kjit_bbcount_add_runs(max_blocks / 2);
  return 0;
}
const struct kjit_plugin *kjit_example_branch_profile(void) { return &branch_profile_plugin; }
uint32_t kjit_branch_profile_count(void) { return kjit_pc_index_count(&branch_index); }
uint64_t kjit_branch_profile_dropped(void) { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }

static uint64_t counter(uint32_t i, int which) {
  if (i >= kjit_branch_profile_count()) return 0;
  if (percpu_counts) return kjit_percpu_sum_u64(&percpu_counts[2 * i + which]);
  return __atomic_load_n(which ? &entries[i].not_taken : &entries[i].taken, __ATOMIC_RELAXED);
}

const struct kjit_branch_entry *kjit_branch_profile_entry(uint32_t i) {
  return i < kjit_branch_profile_count() ? &entries[i] : 0;
}
uint64_t kjit_branch_profile_taken(uint32_t i) { return counter(i, 0); }
uint64_t kjit_branch_profile_not_taken(uint32_t i) { return counter(i, 1); }

void kjit_branch_profile_clear(void) {
  kjit_bbcount_clear();
  uint32_t n = kjit_branch_profile_count();
  for (uint32_t i = 0; i < n; i++) {
    if (!percpu_counts) {
      __atomic_store_n(&entries[i].taken, 0, __ATOMIC_RELAXED);
      __atomic_store_n(&entries[i].not_taken, 0, __ATOMIC_RELAXED);
      continue;
    }
    for (uint32_t cpu = 0; cpu < kjit_percpu_ncpus(); cpu++) {
      uint64_t *c = (uint64_t *)kjit_percpu_copy(&percpu_counts[2 * i], cpu);
      if (c) {
        __atomic_store_n(&c[0], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&c[1], 0, __ATOMIC_RELAXED);
      }
    }
  }
}
