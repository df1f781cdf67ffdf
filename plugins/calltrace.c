// SPDX-License-Identifier: GPL-2.0
/* calltrace: trace every call (direct or indirect) into a ring buffer of
 * call targets.  The recording routine is small enough to be inlined; for
 * a direct call the target is a constant and becomes an immediate, and so
 * does the ring's mask, fixed before anything is translated. */
#include "kjit_examples.h"

static struct kjit_call_ring *ring;

/* The head is stored before the slot so that the compiler masks the old
 * head in place (`and reg, mask`: an immediate once inlined). */
static void record(struct kjit_call_ring *r, uint64_t mask, uint64_t target) {
  uint64_t head = r->head;
  r->head = head + 1;
  r->target[head & mask] = target;
}

static void instrument_insn(struct kjit_insn *insn, void *arg) {
  (void)arg;
  if (!kjit_insn_is_call(insn)) return;
  kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)record, 3, KJIT_ARG_PTR(ring), KJIT_ARG_CONST(ring->mask),
                   KJIT_ARG_BRANCH_TARGET());
}

static const struct kjit_plugin calltrace_plugin = {
    .name = "calltrace",
    .on_insn = instrument_insn,
};

int kjit_calltrace_init(uint32_t capacity_pow2) {
  if (capacity_pow2 == 0 || (capacity_pow2 & (capacity_pow2 - 1))) return -22;
  ring = (struct kjit_call_ring *)kjit_alloc(sizeof(*ring) + sizeof(uint64_t) * (uint64_t)capacity_pow2);
  if (!ring) return -12;
  ring->mask = capacity_pow2 - 1;
  return 0;
}
const struct kjit_plugin *kjit_example_calltrace(void) { return &calltrace_plugin; }
const struct kjit_call_ring *kjit_calltrace_ring(void) { return ring; }
