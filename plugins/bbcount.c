/* Dynamic basic-block counts.  A dynamic block ends at its control
 * transfer, so a block is counted where it ends with one (a block cut by
 * the engine's size limit continues in the next, which is counted). */
#include "kjit_examples.h"

static uint64_t *total;
static struct kjit_bbcount_entry *entries;
static uint32_t max_entries;
static uint32_t used_entries;

static void inc(uint64_t *counter) { (*counter)++; }
static void inc2(uint64_t *a, uint64_t *b) {
  (*a)++;
  (*b)++;
}

static void instrument_block(struct kjit_block *block, void *arg) {
  (void)arg;
  uint32_t n = kjit_block_insn_count(block);
  struct kjit_insn *last = kjit_block_insn(block, n - 1);
  if (!kjit_insn_is_branch(last)) return;
  if (used_entries < max_entries) {
    struct kjit_bbcount_entry *e = &entries[used_entries++];
    e->pc = kjit_block_pc(block);
    kjit_insert_call(last, KJIT_IPOINT_BEFORE, (void *)inc2, 2, KJIT_ARG_PTR(total),
                     KJIT_ARG_PTR(&e->count));
  } else {
    kjit_insert_call(last, KJIT_IPOINT_BEFORE, (void *)inc, 1, KJIT_ARG_PTR(total));
  }
}

static const struct kjit_plugin bbcount_plugin = {
    .name = "bbcount",
    .on_block = instrument_block,
};

int kjit_bbcount_init(uint32_t max_blocks) {
  total = (uint64_t *)kjit_alloc(sizeof(*total));
  entries = (struct kjit_bbcount_entry *)kjit_alloc(sizeof(*entries) * (uint64_t)max_blocks);
  max_entries = entries ? max_blocks : 0;
  used_entries = 0;
  return total ? 0 : -12;
}
const struct kjit_plugin *kjit_example_bbcount(void) { return &bbcount_plugin; }
uint64_t kjit_bbcount_total(void) { return total ? *total : 0; }
const struct kjit_bbcount_entry *kjit_bbcount_entries(uint32_t *n) {
  *n = used_entries;
  return entries;
}
