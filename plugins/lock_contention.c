// SPDX-License-Identifier: GPL-2.0
/* lock_contention: contention on `lock cmpxchg`.  After each one, the routine gets
 * rflags: ZF clear means the compare failed and the caller's retry loop will
 * go round again. */
#include "kjit_examples.h"

static struct kjit_lock_stats *stats;

static void after_cmpxchg(struct kjit_lock_stats *s, uint64_t rflags) {
  s->attempts++;
  s->failures += !(rflags & KJIT_RFLAGS_ZF);
}

static void instrument_block(struct kjit_block *block, void *arg) {
  (void)arg;
  uint32_t n = kjit_block_insn_count(block);
  for (uint32_t i = 0; i < n; i++) {
    struct kjit_insn *insn = kjit_block_insn(block, i);
    if (!kjit_insn_has_lock_prefix(insn) || !kjit_insn_is_cmpxchg(insn)) continue;
    kjit_insert_call(insn, KJIT_IPOINT_AFTER, (void *)after_cmpxchg, 2, KJIT_ARG_PTR(stats),
                     KJIT_ARG_FLAGS());
  }
}

static const struct kjit_plugin lock_plugin = {
    .name = "lock_contention",
    .on_block = instrument_block,
};

int kjit_lock_contention_init(void) {
  stats = (struct kjit_lock_stats *)kjit_alloc(sizeof(*stats));
  return stats ? 0 : -12;
}
const struct kjit_plugin *kjit_example_lock_contention(void) { return &lock_plugin; }
const struct kjit_lock_stats *kjit_lock_contention_result(void) { return stats; }
