// SPDX-License-Identifier: GPL-2.0
/* Calls per routine.  A direct call's target is known when the block is
 * built, so its counter is found then and the inserted code is one inlined
 * increment; indirect calls look their target up when they run.
 *
 * The table is open-addressed and never grows: a call whose routine finds
 * it full is counted in `dropped` instead (an inlined increment as well for
 * a direct call), so a result always says how many calls it is missing.
 * Indirect calls and entries claim slots at run time, on any CPU: a slot is
 * claimed with a compare-and-swap, so two routines never share one. */
#include "kjit_examples.h"

static struct kjit_entry_count *table;
static uint32_t capacity;  /* power of two */
static uint64_t *dropped;  /* calls that found the table full */

static struct kjit_entry_count *slot_for(struct kjit_entry_count *t, uint64_t mask, uint64_t pc) {
  for (uint64_t i = (pc * 0x9e3779b97f4a7c15ull) >> 40, n = 0; n <= mask; i++, n++) {
    struct kjit_entry_count *e = &t[i & mask];
    uint64_t seen = __atomic_load_n(&e->pc, __ATOMIC_RELAXED);
    /* A failed exchange leaves the routine that claimed it first in `seen`. */
    if (seen == 0 &&
        __atomic_compare_exchange_n(&e->pc, &seen, pc, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return e;
    if (seen == pc) return e;
  }
  return 0;
}

static void inc(uint64_t *counter) { (*counter)++; }

/* Not inlinable (a loop): an outlined call, made only at indirect calls. */
static void count_indirect(struct kjit_entry_count *t, uint64_t mask, uint64_t *lost,
                           uint64_t target) {
  struct kjit_entry_count *e = slot_for(t, mask, target);
  if (e) e->count++;
  else (*lost)++;
}

static void instrument_insn(struct kjit_insn *insn, void *arg) {
  (void)arg;
  if (!kjit_insn_is_call(insn)) return;
  uint64_t target = kjit_insn_branch_target(insn);
  if (target) {
    struct kjit_entry_count *e = slot_for(table, capacity - 1, target);
    kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)inc, 1,
                     KJIT_ARG_PTR(e ? &e->count : dropped));
  } else {
    kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)count_indirect, 4, KJIT_ARG_PTR(table),
                     KJIT_ARG_CONST(capacity - 1), KJIT_ARG_PTR(dropped), KJIT_ARG_BRANCH_TARGET());
  }
}

static void on_entry(uint64_t entry_pc, void *arg) {
  (void)arg;
  struct kjit_entry_count *e = slot_for(table, capacity - 1, entry_pc);
  if (e) e->count++;
  else (*dropped)++;
}

static const struct kjit_plugin entry_count_plugin = {
    .name = "entry_count",
    .on_insn = instrument_insn,
    .on_entry = on_entry,
};

int kjit_entry_count_init(uint32_t max_routines) {
  if (max_routines > KJIT_ENTRY_COUNT_MAX) return -22;
  capacity = 1;
  while (capacity < max_routines * 2) capacity *= 2;
  table = (struct kjit_entry_count *)kjit_alloc(sizeof(*table) * (uint64_t)capacity);
  dropped = (uint64_t *)kjit_alloc(sizeof(*dropped));
  return table && dropped ? 0 : -12;
}
const struct kjit_plugin *kjit_example_entry_count(void) { return &entry_count_plugin; }
const struct kjit_entry_count *kjit_entry_count_entries(uint32_t *n) {
  *n = capacity;
  return table;
}
uint64_t kjit_entry_count_dropped(void) { return dropped ? __atomic_load_n(dropped, __ATOMIC_RELAXED) : 0; }
void kjit_entry_count_reset(void) {
  for (uint32_t i = 0; table && i < capacity; i++) __atomic_store_n(&table[i].count, 0, __ATOMIC_RELAXED);
  if (dropped) __atomic_store_n(dropped, 0, __ATOMIC_RELAXED);
}
