// SPDX-License-Identifier: GPL-2.0
/* icount: count the instructions executed (JIFL's first example tool).  One inserted
 * call per block; the engine inlines `*counter += size` as a single add,
 * saving the flags only where they are live.  The counter is per-CPU, so
 * the add is gs-relative (`add qword gs:[...], imm`, like this_cpu_add) and
 * two CPUs running the same code lose no increment; the result is the sum
 * over the CPUs. */
#include "kjit_examples.h"

static uint64_t *count;

static void docount(uint64_t *counter, uint64_t size) { *counter += size; }

static void instrument_block(struct kjit_block *block, void *arg) {
  (void)arg;
  kjit_insert_call(kjit_block_insn(block, 0), KJIT_IPOINT_BEFORE, (void *)docount, 2,
                   KJIT_ARG_PTR(count), KJIT_ARG_CONST(kjit_block_insn_count(block)));
}

static const struct kjit_plugin icount_plugin = {
    .name = "icount",
    .on_block = instrument_block,
};

int kjit_icount_init(void) {
  count = (uint64_t *)kjit_alloc_percpu(sizeof(*count));
  /* A host without a per-CPU window: one shared counter, exact on one CPU. */
  if (!count) count = (uint64_t *)kjit_alloc(sizeof(*count));
  return count ? 0 : -12;
}
const struct kjit_plugin *kjit_example_icount(void) { return &icount_plugin; }
uint64_t kjit_icount_result(void) { return kjit_percpu_sum_u64(count); }
