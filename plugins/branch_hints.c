// SPDX-License-Identifier: GPL-2.0
/* branch_hints: how often conditional branches go the way the code layout
 * predicts (likely()/unlikely() put the expected path on the fall-through
 * side: forward branches are expected not taken, backward ones taken), and
 * how often explicit hint prefixes (0x2e/0x3e, rare in the kernel) are right. */
#include "kjit_examples.h"

static struct kjit_branch_stats *stats;

static void inc(uint64_t *a) { (*a)++; }
static void inc2(uint64_t *a, uint64_t *b) {
  (*a)++;
  (*b)++;
}
static void inc3(uint64_t *a, uint64_t *b, uint64_t *c) {
  (*a)++;
  (*b)++;
  (*c)++;
}

static void instrument_insn(struct kjit_insn *insn, void *arg) {
  (void)arg;
  if (!kjit_insn_is_conditional(insn)) return;
  int expect_taken = kjit_insn_layout_hint(insn) == KJIT_HINT_TAKEN;
  uint64_t *on_taken = expect_taken ? &stats->predicted_right : &stats->predicted_wrong;
  uint64_t *on_fall = expect_taken ? &stats->predicted_wrong : &stats->predicted_right;
  kjit_insert_call(insn, KJIT_IPOINT_TAKEN, (void *)inc3, 3, KJIT_ARG_PTR(&stats->executed),
                   KJIT_ARG_PTR(&stats->taken), KJIT_ARG_PTR(on_taken));
  kjit_insert_call(insn, KJIT_IPOINT_NOT_TAKEN, (void *)inc2, 2, KJIT_ARG_PTR(&stats->executed),
                   KJIT_ARG_PTR(on_fall));
  enum kjit_branch_hint hint = kjit_insn_branch_hint(insn);
  if (hint == KJIT_HINT_NONE) return;
  kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)inc, 1, KJIT_ARG_PTR(&stats->hinted));
  kjit_insert_call(insn, hint == KJIT_HINT_TAKEN ? KJIT_IPOINT_TAKEN : KJIT_IPOINT_NOT_TAKEN,
                   (void *)inc, 1, KJIT_ARG_PTR(&stats->hint_right));
}

static const struct kjit_plugin branch_hints_plugin = {
    .name = "branch_hints",
    .on_insn = instrument_insn,
};

int kjit_branch_hints_init(void) {
  stats = (struct kjit_branch_stats *)kjit_alloc(sizeof(*stats));
  return stats ? 0 : -12;
}
const struct kjit_plugin *kjit_example_branch_hints(void) { return &branch_hints_plugin; }
const struct kjit_branch_stats *kjit_branch_hints_result(void) { return stats; }
