/* SPDX-License-Identifier: GPL-2.0 */
/* Run cells: one counter for the blocks of a run (a block and the copies a
 * trace lays after it that run exactly when it does:
 * kjit_block_runs_with_previous), for a table of per-address entries that a
 * plugin owns (bbcount's blocks).  A cell belongs to one translation, so
 * cells live in two pools, one per half of the code cache
 * (kjit_block_cache_half); when the engine resets a half (on_cache_reset)
 * nothing runs its code any more, and its pool's cells are folded into
 * their entries' `folded` counts and the pool starts again.
 *
 * A run on the not-taken side of a branch that ends a block of another
 * run (kjit_block_runs_unless_previous_taken) has no cell of its own: its
 * count is its parent run's less the branch's taken-edge cell, which the
 * taken side increments (kjit_run_branch).  Every execution that counts in
 * the parent reaches the branch and goes one way or the other, so the
 * difference is exact.
 *
 * An entry's count is its folded count plus the counts of every run it is
 * a member of: a list from first[entry] (member index + 1; 0 ends it) through
 * members[].next, newest first.  One writer (on_block, on_block_dropped,
 * on_cache_reset: the engine lock); readers take no lock: a member is
 * filled, then linked with release order, and a fold changes lists and
 * folded counts inside a sequence count that readers retry on. */
#ifndef KJIT_RUN_CELLS_H
#define KJIT_RUN_CELLS_H
#include "kjit/plugin.h"

#define KJIT_NO_RUN 0xffffffffu

struct kjit_run_member { uint32_t run, next; };

struct kjit_run_cells {
  uint64_t *cells;   /* 2 * per_half: half h's are [h * per_half, ...) */
  int percpu;        /* cells from kjit_alloc_percpu: sum over the CPUs */
  struct kjit_run_member *members;  /* 2 * members_per_half, by half too */
  uint32_t *first;   /* per entry */
  uint64_t *folded;  /* per entry */
  /* per cell: a branch's not-taken run counts parent's less the cell
   * minus names; KJIT_NO_RUN in minus: the run counts its own cell */
  uint32_t *parent, *minus;
  uint32_t nentries, per_half, members_per_half;
  uint32_t used[2], members_used[2];
  uint32_t seq;      /* odd while a fold changes lists */
  uint32_t open;     /* the run the next block may join, or KJIT_NO_RUN */
  uint32_t last;     /* member index + 1 made last (0: none) ... */
  uint32_t last_entry;  /* ... and its entry */
};

/* Room for up to max_runs runs over nentries entries, two members a run:
 * as many as the data window has room for, halving down to 2 (a refused
 * size takes nothing from what is allocated after); 0 when not even that
 * fits (then no run is ever made). */
static inline int kjit_run_cells_init(struct kjit_run_cells *rc, uint32_t nentries, uint32_t max_runs) {
  __builtin_memset(rc, 0, sizeof(*rc));
  rc->open = KJIT_NO_RUN;
  if (!nentries) return 0;
  const uint64_t per_entry = sizeof(uint32_t) + sizeof(uint64_t);  /* first, folded */
  for (uint32_t per_half = max_runs / 2; per_half >= 1; per_half /= 2) {
    const uint64_t ncells = 2 * (uint64_t)per_half, nmembers = 4 * (uint64_t)per_half;
    uint8_t *p = (uint8_t *)kjit_alloc(per_entry * nentries + sizeof(struct kjit_run_member) * nmembers +
                                       2 * sizeof(uint32_t) * ncells);
    if (!p) continue;
    uint64_t *cells = (uint64_t *)kjit_alloc_percpu(sizeof(uint64_t) * ncells);
    rc->percpu = cells != 0;
    if (!cells) cells = (uint64_t *)kjit_alloc(sizeof(uint64_t) * ncells);
    if (!cells) return 0;
    rc->folded = (uint64_t *)p;
    rc->members = (struct kjit_run_member *)(p + sizeof(uint64_t) * nentries);
    rc->first = (uint32_t *)(rc->members + nmembers);
    rc->parent = rc->first + nentries;
    rc->minus = rc->parent + ncells;
    rc->cells = cells;
    rc->nentries = nentries;
    rc->per_half = per_half;
    rc->members_per_half = 2 * per_half;
    return 1;
  }
  return 0;
}

static inline uint64_t kjit_run_cell_value(const struct kjit_run_cells *rc, uint32_t run) {
  return rc->percpu ? kjit_percpu_sum_u64(&rc->cells[run]) : __atomic_load_n(&rc->cells[run], __ATOMIC_RELAXED);
}

/* What run `run` counted.  A branch's not-taken run reads its taken-edge
 * cells first, the deepest first, and its parents' cells after: an
 * increment of a taken-edge cell seen here comes after the increment of
 * the lead cell it is subtracted from (stores become visible in order), so
 * the difference never goes below what a consistent moment would give. */
static inline uint64_t kjit_run_value(const struct kjit_run_cells *rc, uint32_t run) {
  uint64_t less = 0;
  for (uint32_t depth = 0; rc->minus[run] != KJIT_NO_RUN && depth < 2 * rc->per_half; depth++) {
    less += kjit_run_cell_value(rc, rc->minus[run]);
    run = rc->parent[run];
  }
  const uint64_t c = kjit_run_cell_value(rc, run);
  return c > less ? c - less : 0;
}

static inline void kjit_run_cell_zero(struct kjit_run_cells *rc, uint32_t run) {
  if (!rc->percpu) {
    __atomic_store_n(&rc->cells[run], 0, __ATOMIC_RELAXED);
    return;
  }
  for (uint32_t cpu = 0; cpu < kjit_percpu_ncpus(); cpu++) {
    uint64_t *c = (uint64_t *)kjit_percpu_copy(&rc->cells[run], cpu);
    if (c) __atomic_store_n(c, 0, __ATOMIC_RELAXED);
  }
}

/* Makes `entry` a member of run `run` (in half `half`); 0 when the half
 * has no member left. */
static inline int kjit_run_join(struct kjit_run_cells *rc, uint32_t half, uint32_t run, uint32_t entry) {
  if (rc->members_used[half] >= rc->members_per_half || entry >= rc->nentries) return 0;
  const uint32_t m = half * rc->members_per_half + rc->members_used[half]++;
  rc->members[m].run = run;
  rc->members[m].next = rc->first[entry];
  __atomic_store_n(&rc->first[entry], m + 1, __ATOMIC_RELEASE);
  rc->last = m + 1;
  rc->last_entry = entry;
  return 1;
}

/* No block may join the open run any more; the membership made last stays
 * (kjit_run_leave can take it back). */
static inline void kjit_run_end_open(struct kjit_run_cells *rc) { rc->open = KJIT_NO_RUN; }

/* A new run in half `half` led by `entry`, open for the blocks after it:
 * its cell, or NULL when the half has no room. */
static inline uint64_t *kjit_run_lead(struct kjit_run_cells *rc, uint32_t half, uint32_t entry) {
  rc->open = KJIT_NO_RUN;
  rc->last = 0;
  if (half > 1 || rc->used[half] >= rc->per_half) return 0;
  const uint32_t run = half * rc->per_half + rc->used[half];
  rc->minus[run] = KJIT_NO_RUN;
  if (!kjit_run_join(rc, half, run, entry)) return 0;
  rc->used[half]++;
  rc->open = run;
  return &rc->cells[run];
}

/* The block that joined or led the open run last ends in a conditional
 * branch: opens the run of the copy a trace may lay on its not-taken side,
 * which counts the open run's count less the taken edge's.  Returns the
 * taken edge's cell, for code on that edge (KJIT_IPOINT_TAKEN) to
 * increment; NULL, with no run open, when there is no room.  The block's
 * own membership stays (kjit_run_leave takes it back). */
static inline uint64_t *kjit_run_branch(struct kjit_run_cells *rc) {
  if (rc->open == KJIT_NO_RUN) return 0;
  const uint32_t half = rc->open / rc->per_half;
  if (rc->used[half] + 2 > rc->per_half) {
    kjit_run_end_open(rc);
    return 0;
  }
  const uint32_t taken = half * rc->per_half + rc->used[half], not_taken = taken + 1;
  rc->minus[taken] = KJIT_NO_RUN;
  rc->parent[not_taken] = rc->open;
  rc->minus[not_taken] = taken;
  rc->used[half] += 2;
  rc->open = not_taken;
  return &rc->cells[taken];
}

/* `entry` joins the open run; 0 when there is none or no room. */
static inline int kjit_run_join_open(struct kjit_run_cells *rc, uint32_t entry) {
  rc->last = 0;
  if (rc->open == KJIT_NO_RUN) return 0;
  return kjit_run_join(rc, rc->open / rc->per_half, rc->open, entry);
}

static inline void kjit_run_close(struct kjit_run_cells *rc) {
  rc->open = KJIT_NO_RUN;
  rc->last = 0;
}

/* Takes back the membership made last and closes the run.  A reader that
 * reached it meanwhile read its run's cell, still zero: no code of that
 * translation has run. */
static inline void kjit_run_leave(struct kjit_run_cells *rc) {
  if (rc->last) {
    struct kjit_run_member *m = &rc->members[rc->last - 1];
    __atomic_store_n(&rc->first[rc->last_entry], m->next, __ATOMIC_RELEASE);
    __atomic_store_n(&m->run, KJIT_NO_RUN, __ATOMIC_RELAXED);
  }
  kjit_run_close(rc);
}

/* What the runs `entry` is a member of counted. */
static inline uint64_t kjit_run_count(const struct kjit_run_cells *rc, uint32_t entry) {
  if (!rc->nentries || entry >= rc->nentries) return 0;
  for (;;) {
    const uint32_t s = __atomic_load_n(&rc->seq, __ATOMIC_ACQUIRE);
    if (s & 1) continue;  /* a fold on another CPU, a few microseconds */
    uint64_t c = __atomic_load_n(&rc->folded[entry], __ATOMIC_RELAXED);
    for (uint32_t m = __atomic_load_n(&rc->first[entry], __ATOMIC_ACQUIRE); m; m = rc->members[m - 1].next) {
      const uint32_t run = __atomic_load_n(&rc->members[m - 1].run, __ATOMIC_RELAXED);
      if (run != KJIT_NO_RUN) c += kjit_run_value(rc, run);
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&rc->seq, __ATOMIC_RELAXED) == s) return c;
  }
}

/* Half `half` is gone: its runs' cells go into their members' folded
 * counts, its members leave their lists, its pool starts again. */
static inline void kjit_run_reset_half(struct kjit_run_cells *rc, uint32_t half) {
  if (!rc->nentries || half > 1) return;
  const uint32_t lo = half * rc->members_per_half, hi = lo + rc->members_per_half;
  __atomic_fetch_add(&rc->seq, 1, __ATOMIC_SEQ_CST);
  for (uint32_t e = 0; e < rc->nentries; e++) {
    uint32_t *link = &rc->first[e];
    while (*link) {
      struct kjit_run_member *m = &rc->members[*link - 1];
      if (*link - 1 < lo || *link - 1 >= hi) {
        link = &m->next;
        continue;
      }
      if (m->run != KJIT_NO_RUN)
        __atomic_store_n(&rc->folded[e], rc->folded[e] + kjit_run_value(rc, m->run), __ATOMIC_RELAXED);
      __atomic_store_n(link, m->next, __ATOMIC_RELAXED);
    }
  }
  for (uint32_t r = half * rc->per_half; r < (half + 1) * rc->per_half && r < half * rc->per_half + rc->used[half]; r++)
    kjit_run_cell_zero(rc, r);
  rc->used[half] = rc->members_used[half] = 0;
  if (rc->open != KJIT_NO_RUN && rc->open / rc->per_half == half) kjit_run_close(rc);
  __atomic_fetch_add(&rc->seq, 1, __ATOMIC_SEQ_CST);
}

/* Zeroes every cell and folded count (the counts start again). */
static inline void kjit_run_clear(struct kjit_run_cells *rc) {
  for (uint32_t h = 0; h < 2 && rc->nentries; h++)
    for (uint32_t r = 0; r < rc->used[h]; r++) kjit_run_cell_zero(rc, h * rc->per_half + r);
  for (uint32_t e = 0; e < rc->nentries; e++) __atomic_store_n(&rc->folded[e], 0, __ATOMIC_RELAXED);
}

#endif
