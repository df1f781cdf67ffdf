/* SPDX-License-Identifier: GPL-2.0 */
/* The example tools (JIFL's, docs/design.md#sources), written against
 * include/kjit/plugin.h.  The same C sources build into the simulator
 * (kjit-sim --tool NAME) and into plugin modules for the kernel.  Each has an init (allocating its data in
 * the engine's data window, so call it after kjit_engine_init), the plugin
 * descriptor, and a result accessor. */
#ifndef KJIT_EXAMPLES_H
#define KJIT_EXAMPLES_H
#include "kjit/plugin.h"
#ifdef __cplusplus
extern "C" {
#endif

/* icount: instructions executed. */
int kjit_icount_init(void);
const struct kjit_plugin *kjit_example_icount(void);
uint64_t kjit_icount_result(void);

/* Dynamic basic blocks executed (total) and per block start.  len and
 * ninsn describe the block as first built (bytes and instructions of
 * original code), so counts can be spread over instructions off-line.
 * fragment: the block does not end in a control transfer (the engine cut
 * it, it goes on in the block at pc + len); it has its own counter but is
 * not part of the total, which counts blocks that end in a transfer. */
struct kjit_bbcount_entry { uint64_t pc; uint64_t count; uint32_t len; uint16_t ninsn, fragment; };
int kjit_bbcount_init(uint32_t max_blocks);
/* As kjit_bbcount_init, with room for up to max_runs runs (kjit_bbcount_init:
 * max_blocks / 2; 12 bytes of the data window per block and 32 per run,
 * fewer runs where the window has less room left).  A trace that finds no
 * run left counts each of its blocks on its own.  kjit_bbcount_add_runs
 * makes the room later, once (a tool that shares bbcount's table and
 * allocates its own tables first: branch_profile). */
int kjit_bbcount_init_runs(uint32_t max_blocks, uint32_t max_runs);
int kjit_bbcount_add_runs(uint32_t max_runs);
const struct kjit_plugin *kjit_example_bbcount(void);
uint64_t kjit_bbcount_total(void);
/* Per-block entries 0 .. kjit_bbcount_blocks() - 1, one per distinct block
 * start (a block rebuilt after a flush keeps its entry), with its start and
 * its count summed over the CPUs.  At most max_blocks; once the table is
 * full, a block translated without an entry of its own is counted in the
 * total only, and in kjit_bbcount_dropped(). */
uint32_t kjit_bbcount_blocks(void);
uint64_t kjit_bbcount_pc(uint32_t i);
uint64_t kjit_bbcount_count(uint32_t i);
/* The entry's block bytes, instructions and fragment flag (0 past the end). */
uint32_t kjit_bbcount_len(uint32_t i);
uint32_t kjit_bbcount_ninsn(uint32_t i);
int kjit_bbcount_is_fragment(uint32_t i);
/* Whether the per-block counters are per-CPU (else locked adds). */
int kjit_bbcount_counts_percpu(void);
/* Zeroes the per-block counters, and with them the total. */
void kjit_bbcount_clear(void);
uint64_t kjit_bbcount_dropped(void);
/* Runs made so far (translations whose run cell counts several blocks, or
 * may), and room for how many (kjit_bbcount_init_runs). */
uint32_t kjit_bbcount_runs(void);
uint32_t kjit_bbcount_runs_max(void);

/* calltrace: call tracing into a ring buffer of call targets. */
struct kjit_call_ring { uint64_t head; uint64_t mask; uint64_t target[]; };
int kjit_calltrace_init(uint32_t capacity_pow2);
const struct kjit_plugin *kjit_example_calltrace(void);
const struct kjit_call_ring *kjit_calltrace_ring(void);

/* Per conditional branch (its address and its target): how
 * often it was taken and not taken, summed over the CPUs; with bbcount's
 * block table and total alongside (kjit_bbcount_*: this tool runs bbcount's
 * instrumentation too, over max_blocks).  Entries 0 ..
 * kjit_branch_profile_count() - 1, at most max_branches; branches that
 * found the table full are not counted and are reported as dropped. */
struct kjit_branch_entry { uint64_t pc, target, taken, not_taken; };
int kjit_branch_profile_init(uint32_t max_branches, uint32_t max_blocks);
const struct kjit_plugin *kjit_example_branch_profile(void);
uint32_t kjit_branch_profile_count(void);
const struct kjit_branch_entry *kjit_branch_profile_entry(uint32_t i);
uint64_t kjit_branch_profile_taken(uint32_t i);
uint64_t kjit_branch_profile_not_taken(uint32_t i);
uint64_t kjit_branch_profile_dropped(void);
/* Zeroes every count (the blocks' too), keeping the entries. */
void kjit_branch_profile_clear(void);

/* branch_hints: accuracy of the static branch prediction (the compiler's layout
 * says forward = not taken, backward = taken; hint prefixes are counted too). */
struct kjit_branch_stats {
  uint64_t executed, taken, predicted_right, predicted_wrong;
  uint64_t hinted, hint_right;
};
int kjit_branch_hints_init(void);
const struct kjit_plugin *kjit_example_branch_hints(void);
const struct kjit_branch_stats *kjit_branch_hints_result(void);

/* lock_contention: contention on `lock cmpxchg` (attempts and failed attempts). */
struct kjit_lock_stats { uint64_t attempts, failures; };
int kjit_lock_contention_init(void);
const struct kjit_plugin *kjit_example_lock_contention(void);
const struct kjit_lock_stats *kjit_lock_contention_result(void);

/* Calls per routine: every direct or indirect call, per target, plus each
 * instrumented entry point's own entries.  The table has room for at least
 * max_routines routines (at most KJIT_ENTRY_COUNT_MAX; -EINVAL above);
 * entries lists every slot (pc 0 = free).  Calls to routines that find it
 * full are counted in kjit_entry_count_dropped() only. */
#define KJIT_ENTRY_COUNT_MAX (1u << 24)
struct kjit_entry_count { uint64_t pc; uint64_t count; };
int kjit_entry_count_init(uint32_t max_routines);
const struct kjit_plugin *kjit_example_entry_count(void);
const struct kjit_entry_count *kjit_entry_count_entries(uint32_t *n);
uint64_t kjit_entry_count_dropped(void);
/* Zeroes every count and the dropped count; routines keep their slots. */
void kjit_entry_count_reset(void);

#ifdef __cplusplus
}
#endif
#endif
