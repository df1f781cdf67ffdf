// SPDX-License-Identifier: GPL-2.0
/* Dynamic basic-block counts.  A dynamic block ends at its control
 * transfer, so a block is counted in the total where it ends with one.  A
 * block cut by the engine (its size limit, an instruction that must run at
 * its own address) continues in the next one; it gets a counter of its own
 * (a fragment, outside the total), so that every executed instruction is
 * under some counted block and coverage has no holes at the cuts.
 *
 * Counters are keyed by the block's original start address: a block
 * translated again (after a flush, a cache switch, an abandoned build)
 * adds to the counter it already has, so the table holds one entry per
 * distinct block and fills only with distinct blocks.  The table and its
 * index live in the data window (kjit_alloc), which survives flushes and
 * is reset only when the engine is re-created, together with this plugin's
 * init.  on_block runs at build time under the engine lock, so the index
 * has one writer (pc_index.h).
 *
 * The total is not counted on its own: it is the sum of the counts of the
 * whole blocks, plus a counter for the translations that got no entry, so
 * a block costs one increment, not two.
 *
 * Runs.  A callee's copy that a trace lays after its caller's block runs
 * exactly when that block does (kjit_block_runs_with_previous), and so on
 * down the copy: such a run has one counter for its translation (a run
 * cell, run_cells.h), incremented by its first block, and a block's count
 * is that of its own counter plus the counts of every run it is a member
 * of.  The copy on a branch's not-taken side (kjit_block_runs_unless_
 * previous_taken) is in a run counted as the branch's block's less a cell
 * the taken edge increments: the hot side of a branch runs no counter.  Cells belong to translations: those of a half of the code cache are
 * folded into the counts when the engine resets it (on_cache_reset); while
 * a half has no cell left, its traces count each block on its own, as
 * before runs.  A block whose build the engine gives up after on_block
 * (on_block_dropped) leaves the run it joined.
 *
 * Every count is exact on SMP.  The per-block
 * counters are per-CPU too when the per-CPU window holds one u64 per
 * possible entry (kjit.ko: percpu_kb large enough for bb_max); otherwise
 * each lives in its entry and is incremented with a locked add, which
 * costs more when two CPUs run the same block at once but loses nothing. */
#include "kjit_examples.h"
#include "pc_index.h"
#include "run_cells.h"

/* Whole blocks counted in no whole entry (no entry, or the entry a
 * fragment build of the same start made), and fragments counted in a
 * whole entry: the total adds the first and takes away the second. */
static uint64_t *untabled, *excess;
static int cells_percpu;
static struct kjit_bbcount_entry *entries;
static struct kjit_pc_index block_index;
static uint64_t dropped;       /* block translations that got no counter */
static uint64_t *percpu_counts; /* per entry, per CPU; NULL: entries[i].count */

static struct kjit_run_cells runs; /* run_cells.h */

static void inc(uint64_t *counter) { (*counter)++; }
static void inc_shared(uint64_t *counter) { __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }

/* The entry of `pc`, added when missing; NULL when the table is full. */
static struct kjit_bbcount_entry *entry_for(uint64_t pc) {
  uint32_t slot = 0;
  int64_t i = kjit_pc_index_find(&block_index, pc, entries, sizeof(*entries), &slot);
  if (i < 0) return 0;
  if ((uint32_t)i == block_index.used) {
    struct kjit_bbcount_entry *e = &entries[i];
    e->pc = pc;
    e->count = 0;
    e->len = 0;
    e->ninsn = 0;
    e->fragment = 0;
    kjit_pc_index_add(&block_index, slot);
  }
  return &entries[i];
}

/* Fills a new entry's shape (the first build of its block defines it). */
static void describe(struct kjit_bbcount_entry *e, struct kjit_block *block, struct kjit_insn *last,
                     uint32_t n, int fragment) {
  if (e->ninsn) return;
  e->len = (uint32_t)(kjit_insn_pc(last) + kjit_insn_length(last) - kjit_block_pc(block));
  e->fragment = (uint16_t)fragment;
  __atomic_store_n(&e->ninsn, (uint16_t)n, __ATOMIC_RELEASE);
}

static void instrument_block(struct kjit_block *block, void *arg) {
  (void)arg;
  uint32_t n = kjit_block_insn_count(block);
  struct kjit_insn *last = kjit_block_insn(block, n - 1);
  int fragment = !kjit_insn_is_branch(last);
  struct kjit_bbcount_entry *e = entry_for(kjit_block_pc(block));
  if (e) describe(e, block, last, n, fragment);
  void *add = percpu_counts ? (void *)inc : (void *)inc_shared;
  void *add_cell = cells_percpu ? (void *)inc : (void *)inc_shared;
  /* A block that ends as its entry's first build did counts in a run. */
  int in_run = e && fragment == e->fragment;
  uint32_t i = in_run ? (uint32_t)(e - entries) : 0;
  void *add_run = runs.percpu ? (void *)inc : (void *)inc_shared;
  int counted_in_run = in_run &&
                       (kjit_block_runs_with_previous(block) || kjit_block_runs_unless_previous_taken(block)) &&
                       kjit_run_join_open(&runs, i);
  if (!counted_in_run) {
    uint64_t *cell =
        in_run && kjit_block_may_lead_run(block) ? kjit_run_lead(&runs, kjit_block_cache_half(block), i) : 0;
    if (!cell) kjit_run_close(&runs);
    if (cell && kjit_insert_call(last, KJIT_IPOINT_BEFORE, add_run, 1, KJIT_ARG_PTR(cell)) != 0) {
      kjit_run_leave(&runs); /* refused: counted on its own below, or not at all, as before runs */
      cell = 0;
    }
    counted_in_run = cell != 0;
  }
  if (counted_in_run) {
    /* The not-taken side of its branch may run in a run of its own, the
     * block's less the taken edge's: one counter on the side that runs
     * least, when the branch is a forward one (a backward one closes a
     * loop, and its taken side is the hot one).  Otherwise that side
     * joins no run: it does not run every time this block does. */
    if (kjit_insn_is_conditional(last)) {
      uint64_t *taken = kjit_block_may_lead_run(block) && kjit_insn_layout_hint(last) == KJIT_HINT_NOT_TAKEN
                            ? kjit_run_branch(&runs)
                            : 0;
      if (!taken || kjit_insert_call(last, KJIT_IPOINT_TAKEN, add_run, 1, KJIT_ARG_PTR(taken)) != 0)
        kjit_run_end_open(&runs);
    }
    return;
  }
  if (!e) {
    __atomic_store_n(&dropped, dropped + 1, __ATOMIC_RELAXED);
    if (!fragment) kjit_insert_call(last, KJIT_IPOINT_BEFORE, add_cell, 1, KJIT_ARG_PTR(untabled));
    return;
  }
  /* a gs-relative add once inlined, or a locked one on the shared entry */
  kjit_insert_call(last, KJIT_IPOINT_BEFORE, add, 1,
                   percpu_counts ? KJIT_ARG_PTR(&percpu_counts[e - entries]) : KJIT_ARG_PTR(&e->count));
  /* a translation that ends differently from the entry's first (rare) */
  if (fragment != e->fragment)
    kjit_insert_call(last, KJIT_IPOINT_BEFORE, add_cell, 1, KJIT_ARG_PTR(fragment ? excess : untabled));
}

/* The block on_block saw last will not run: neither its membership nor
 * any later block's in its run. */
static void drop_block(struct kjit_block *block, void *arg) {
  (void)block;
  (void)arg;
  kjit_run_leave(&runs);
}

/* Nothing runs the translations of that half any more: their cells fold. */
static void reset_half(uint32_t half, void *arg) {
  (void)arg;
  kjit_run_reset_half(&runs, half);
}

static const struct kjit_plugin bbcount_plugin = {
    .name = "bbcount",
    .on_block = instrument_block,
    .on_block_dropped = drop_block,
    .on_cache_reset = reset_half,
};

int kjit_bbcount_init(uint32_t max_blocks) { return kjit_bbcount_init_runs(max_blocks, max_blocks / 2); }

int kjit_bbcount_init_runs(uint32_t max_blocks, uint32_t max_runs) {
  uint32_t nslots = kjit_pc_index_slots_for(max_blocks);
  untabled = (uint64_t *)kjit_alloc_percpu(2 * sizeof(*untabled));
  cells_percpu = untabled != 0;
  if (!untabled) untabled = (uint64_t *)kjit_alloc(2 * sizeof(*untabled));
  excess = untabled ? untabled + 1 : 0;
  entries = (struct kjit_bbcount_entry *)kjit_alloc(sizeof(*entries) * (uint64_t)max_blocks);
  percpu_counts =
      max_blocks ? (uint64_t *)kjit_alloc_percpu(sizeof(*percpu_counts) * (uint64_t)max_blocks) : 0;
  /* Without room for the table every block is counted in the total only,
   * and reported as dropped. */
  kjit_pc_index_init(&block_index, entries ? (uint32_t *)kjit_alloc(sizeof(uint32_t) * (uint64_t)nslots) : 0,
                     nslots, max_blocks);
  dropped = 0;
  kjit_bbcount_add_runs(max_runs);
  return untabled ? 0 : -12;
}

/* Without room, no runs: every block has its own counter. */
int kjit_bbcount_add_runs(uint32_t max_runs) {
  return kjit_run_cells_init(&runs, entries && max_runs ? block_index.max : 0, max_runs);
}
const struct kjit_plugin *kjit_example_bbcount(void) { return &bbcount_plugin; }
uint64_t kjit_bbcount_dropped(void) { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }
uint32_t kjit_bbcount_runs(void) {
  return __atomic_load_n(&runs.used[0], __ATOMIC_RELAXED) + __atomic_load_n(&runs.used[1], __ATOMIC_RELAXED);
}
uint32_t kjit_bbcount_runs_max(void) { return 2 * runs.per_half; }
uint32_t kjit_bbcount_blocks(void) { return kjit_pc_index_count(&block_index); }
uint64_t kjit_bbcount_pc(uint32_t i) { return i < kjit_bbcount_blocks() ? entries[i].pc : 0; }
uint64_t kjit_bbcount_count(uint32_t i) {
  if (i >= kjit_bbcount_blocks()) return 0;
  uint64_t c = percpu_counts ? kjit_percpu_sum_u64(&percpu_counts[i]) : __atomic_load_n(&entries[i].count, __ATOMIC_RELAXED);
  return c + kjit_run_count(&runs, i);
}
uint32_t kjit_bbcount_len(uint32_t i) { return i < kjit_bbcount_blocks() ? entries[i].len : 0; }
uint32_t kjit_bbcount_ninsn(uint32_t i) {
  return i < kjit_bbcount_blocks() ? __atomic_load_n(&entries[i].ninsn, __ATOMIC_ACQUIRE) : 0;
}
int kjit_bbcount_is_fragment(uint32_t i) { return i < kjit_bbcount_blocks() && entries[i].fragment; }
int kjit_bbcount_counts_percpu(void) { return percpu_counts != 0; }
uint64_t kjit_bbcount_total(void) {
  uint64_t sum = kjit_percpu_sum_u64(untabled);
  uint32_t n = kjit_bbcount_blocks();
  for (uint32_t i = 0; i < n; i++)
    if (!kjit_bbcount_is_fragment(i)) sum += kjit_bbcount_count(i);
  return sum - kjit_percpu_sum_u64(excess);
}

static void zero_percpu(uint64_t *cell) {
  for (uint32_t cpu = 0; cpu < kjit_percpu_ncpus(); cpu++) {
    uint64_t *c = (uint64_t *)kjit_percpu_copy(cell, cpu);
    if (c) __atomic_store_n(c, 0, __ATOMIC_RELAXED);
  }
}

void kjit_bbcount_clear(void) {
  uint32_t n = kjit_bbcount_blocks();
  for (uint32_t i = 0; i < n; i++) {
    if (percpu_counts) zero_percpu(&percpu_counts[i]);
    else __atomic_store_n(&entries[i].count, 0, __ATOMIC_RELAXED);
  }
  kjit_run_clear(&runs);
  if (cells_percpu) {
    zero_percpu(untabled);
    zero_percpu(excess);
  } else if (untabled) {
    __atomic_store_n(untabled, 0, __ATOMIC_RELAXED);
    __atomic_store_n(excess, 0, __ATOMIC_RELAXED);
  }
}
