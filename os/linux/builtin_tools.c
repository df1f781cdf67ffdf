// SPDX-License-Identifier: GPL-2.0
/* The built-in tools: the example plugins of plugins/ (the same C sources
 * the simulator uses, compiled into kjit.ko) plus callstack.c, each
 * one entry of a table of operations.  One tool is active (config.c); its
 * data lives in the engine's data window, so it is allocated afresh every
 * time the engine is re-created.  Results are read and reset in place. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include "builtin_tools.h"
#include "callstack.h"
#include "kcov.h"
#include "kjit/plugin.h"
#include "kjit_examples.h"

static unsigned int bb_max = 8192;
module_param(bb_max, uint, 0444);
MODULE_PARM_DESC(bb_max, "bbcount: distinct blocks with their own counter (more are counted in the total and reported as dropped)");
static unsigned int ring_size = 8192;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size, "calltrace ring entries (power of two)");
static unsigned int cs_size = 1 << 16;
module_param(cs_size, uint, 0444);
MODULE_PARM_DESC(cs_size, "callstack ring events (power of two)");
static unsigned int br_max = 4096;
module_param(br_max, uint, 0444);
/* 32 bytes and two index slots per branch: 160 KiB of the data window
 * (data_kb) beside bbcount's table. */
MODULE_PARM_DESC(br_max, "branches: distinct conditional branches with their own counters (more are reported as dropped)");
static unsigned int ec_max = 4096;
module_param(ec_max, uint, 0444);
MODULE_PARM_DESC(ec_max, "entry_count: routines with their own counter (calls to more are reported as dropped)");

/* Copies up to `cap` records to user space; *nrec = how many exist. */
static int put_recs(struct kjit_ioc_rec __user *u, u64 cap, u64 *nrec,
		    void (*fill)(u64 i, struct kjit_ioc_rec *r, const void *ctx), const void *ctx,
		    u64 n)
{
	struct kjit_ioc_rec r;
	u64 i;

	*nrec = n;
	for (i = 0; i < n && i < cap; i++) {
		memset(&r, 0, sizeof(r));
		fill(i, &r, ctx);
		if (copy_to_user(&u[i], &r, sizeof(r)))
			return -EFAULT;
		if (!(i & 1023))
			cond_resched();
	}
	return 0;
}

/* The tool started last (kjit_tool_started): whose counts are read. */
static u32 started_tool;

void kjit_tool_started(u32 id)
{
	WRITE_ONCE(started_tool, id);
}

/* ---- icount: the example keeps its counter private, so a reset remembers
 * a baseline ---------------------------------------------------------- */

static u64 icount_base;

static int icount_init(void)
{
	icount_base = 0;
	return kjit_icount_init();
}

static void icount_reset(void)
{
	icount_base = kjit_icount_result();
}

static int icount_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u, u64 cap)
{
	res->scalars[0] = kjit_icount_result() - icount_base;
	return 0;
}

u64 kjit_tool_icount(void)
{
	return READ_ONCE(started_tool) == KJIT_TOOL_ICOUNT ? kjit_icount_result() - icount_base : 0;
}

/* ---- bbcount ---------------------------------------------------------- */

static int bbcount_init(void)
{
	return kjit_bbcount_init(bb_max);
}

static void bbcount_reset(void)
{
	kjit_bbcount_clear();
}

static void fill_bb(u64 i, struct kjit_ioc_rec *r, const void *ctx)
{
	r->pc = kjit_bbcount_pc(i);
	r->count = kjit_bbcount_count(i);
	r->sp = kjit_bbcount_len(i) | (u64)kjit_bbcount_ninsn(i) << 32;
	r->pid_type = kjit_bbcount_is_fragment(i) ? KJIT_REC_BB_FRAGMENT : 0;
}

static int bbcount_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u, u64 cap)
{
	res->scalars[0] = kjit_bbcount_total();
	res->scalars[1] = kjit_bbcount_dropped();
	res->scalars[2] = kjit_bbcount_counts_percpu();
	res->scalars[3] = kjit_bbcount_runs();
	res->scalars[4] = kjit_bbcount_runs_max();
	return put_recs(u, cap, &res->nrec, fill_bb, NULL, kjit_bbcount_blocks());
}

/* ---- branches: bbcount's blocks, then the conditional branches --------- */

static int branches_init(void)
{
	return kjit_branch_profile_init(br_max, bb_max);
}

static void branches_reset(void)
{
	kjit_branch_profile_clear();
}

static void fill_branch(u64 i, struct kjit_ioc_rec *r, const void *ctx)
{
	u64 blocks = kjit_bbcount_blocks();
	const struct kjit_branch_entry *e;

	if (i < blocks) {
		fill_bb(i, r, ctx);
		return;
	}
	e = kjit_branch_profile_entry(i - blocks);
	if (!e)
		return;
	r->pc = e->pc;
	r->count = kjit_branch_profile_taken(i - blocks);
	r->sp = kjit_branch_profile_not_taken(i - blocks);
	r->pid_type = KJIT_REC_BRANCH | (u64)(u32)(e->target - e->pc) << 32;
}

static int branches_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u, u64 cap)
{
	res->scalars[0] = kjit_bbcount_total();
	res->scalars[1] = kjit_bbcount_dropped();
	res->scalars[2] = kjit_bbcount_counts_percpu();
	res->scalars[3] = kjit_branch_profile_dropped();
	return put_recs(u, cap, &res->nrec, fill_branch, NULL,
			(u64)kjit_bbcount_blocks() + kjit_branch_profile_count());
}

/* ---- calltrace -------------------------------------------------------- */

static int calltrace_init(void)
{
	return kjit_calltrace_init(ring_size);
}

static void calltrace_reset(void)
{
	struct kjit_call_ring *r = (void *)kjit_calltrace_ring();

	if (r) {
		memset(r->target, 0, (r->mask + 1) * sizeof(u64));
		WRITE_ONCE(r->head, 0);
	}
}

struct ring_ctx { const struct kjit_call_ring *r; u64 start; };
static void fill_ring(u64 i, struct kjit_ioc_rec *r, const void *ctx)
{
	const struct ring_ctx *c = ctx;

	r->pc = READ_ONCE(c->r->target[(c->start + i) & c->r->mask]);
}

static int calltrace_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u, u64 cap)
{
	struct ring_ctx c = { kjit_calltrace_ring(), 0 };
	u64 head, size;

	if (!c.r)
		return 0;
	head = READ_ONCE(c.r->head);
	size = c.r->mask + 1;
	res->scalars[0] = head;
	c.start = head > size ? head - size : 0;
	res->scalars[1] = c.start;   /* overwritten: the ring keeps the newest */
	return put_recs(u, cap, &res->nrec, fill_ring, &c, head - c.start);
}

/* ---- branch_hints ----------------------------------------------------- */

static void branch_hints_reset(void)
{
	struct kjit_branch_stats *s = (void *)kjit_branch_hints_result();

	if (s)
		memset(s, 0, sizeof(*s));
}

static int branch_hints_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u,
				u64 cap)
{
	const struct kjit_branch_stats *s = kjit_branch_hints_result();

	if (s) {
		res->scalars[0] = s->executed;
		res->scalars[1] = s->taken;
		res->scalars[2] = s->predicted_right;
		res->scalars[3] = s->predicted_wrong;
		res->scalars[4] = s->hinted;
		res->scalars[5] = s->hint_right;
	}
	return 0;
}

/* ---- lock_contention -------------------------------------------------- */

static void lock_contention_reset(void)
{
	struct kjit_lock_stats *s = (void *)kjit_lock_contention_result();

	if (s)
		memset(s, 0, sizeof(*s));
}

static int lock_contention_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u,
				   u64 cap)
{
	const struct kjit_lock_stats *s = kjit_lock_contention_result();

	if (s) {
		res->scalars[0] = s->attempts;
		res->scalars[1] = s->failures;
	}
	return 0;
}

/* ---- entry_count ------------------------------------------------------ */

static int entry_count_init(void)
{
	if (ec_max > KJIT_ENTRY_COUNT_MAX) {
		pr_err("ec_max %u: at most %u routines\n", ec_max, KJIT_ENTRY_COUNT_MAX);
		return -EINVAL;
	}
	return kjit_entry_count_init(ec_max);
}

struct ec_ctx { const struct kjit_entry_count *e; u32 *idx; };
static void fill_ec(u64 i, struct kjit_ioc_rec *r, const void *ctx)
{
	const struct ec_ctx *c = ctx;

	r->pc = READ_ONCE(c->e[c->idx[i]].pc);
	r->count = READ_ONCE(c->e[c->idx[i]].count);
}

/* Only the routines seen so far (slots with a pc). */
static int entry_count_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u,
			       u64 cap)
{
	u32 n, i, k;
	const struct kjit_entry_count *e = kjit_entry_count_entries(&n);
	struct ec_ctx c = { e, NULL };
	int ret;

	if (!e)
		return 0;
	res->scalars[1] = kjit_entry_count_dropped();
	c.idx = kvmalloc_array(n ? n : 1, sizeof(u32), GFP_KERNEL);
	if (!c.idx)
		return -ENOMEM;
	for (i = k = 0; i < n; i++)
		if (READ_ONCE(e[i].pc))
			c.idx[k++] = i;
	ret = put_recs(u, cap, &res->nrec, fill_ec, &c, k);
	kvfree(c.idx);
	return ret;
}

/* ---- callstack -------------------------------------------------------- */

static int callstack_init(void)
{
	return kjit_callstack_init(cs_size);
}

struct cs_ctx { const struct kjit_cs_event *e; u64 start, mask; };
static void fill_cs(u64 i, struct kjit_ioc_rec *r, const void *ctx)
{
	const struct cs_ctx *c = ctx;
	const struct kjit_cs_event *e = &c->e[(c->start + i) & c->mask];
	u32 type = READ_ONCE(e->type);

	smp_rmb();
	r->pc = e->pc;
	r->sp = e->sp;
	r->count = e->ts;
	r->pid_type = ((u64)(e->insns_valid ? KJIT_REC_INSNS : 0) << 56) | ((u64)e->cpu << 40) |
		      ((u64)e->pid << 8) | type;
	r->insns = e->insns;
	r->switches = e->switches;
}

static int callstack_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u, u64 cap)
{
	struct cs_ctx c;
	u64 head, size;

	c.e = kjit_callstack_ring(&head, &size);
	if (!c.e)
		return 0;
	c.mask = size - 1;
	res->scalars[0] = head;
	res->scalars[1] = size;
	c.start = head > size ? head - size : 0;
	res->scalars[2] = c.start;   /* overwritten: the ring keeps the newest */
	return put_recs(u, cap, &res->nrec, fill_cs, &c, head - c.start);
}

/* ---- kcov: coverage goes to the threads' own buffers (kcov.c) ------------ */

static int kcov_tool_init(void)
{
	int ret = kjit_kcov_device_create();

	if (ret == -EEXIST)
		pr_err("this kernel has its own KCOV (/sys/kernel/debug/kcov): use it\n");
	return ret;
}

static int kcov_results(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u, u64 cap)
{
	res->scalars[0] = kjit_kcov_enabled_tasks();
	return 0;
}

/* ---- the table -------------------------------------------------------- */

static const struct kjit_builtin_tool tools[KJIT_TOOL_MAX + 1] = {
	[KJIT_TOOL_NONE] = { .name = "none" },
	[KJIT_TOOL_ICOUNT] = {
		.name = "icount", .init = icount_init, .plugin = kjit_example_icount,
		.reset = icount_reset, .results = icount_results,
	},
	[KJIT_TOOL_BBCOUNT] = {
		.name = "bbcount", .init = bbcount_init, .plugin = kjit_example_bbcount,
		.reset = bbcount_reset, .results = bbcount_results,
	},
	[KJIT_TOOL_CALLTRACE] = {
		.name = "calltrace", .init = calltrace_init, .plugin = kjit_example_calltrace,
		.reset = calltrace_reset, .results = calltrace_results,
	},
	[KJIT_TOOL_BRANCH_HINTS] = {
		.name = "branch_hints", .init = kjit_branch_hints_init,
		.plugin = kjit_example_branch_hints, .reset = branch_hints_reset,
		.results = branch_hints_results,
	},
	[KJIT_TOOL_LOCK_CONTENTION] = {
		.name = "lock_contention", .init = kjit_lock_contention_init,
		.plugin = kjit_example_lock_contention, .reset = lock_contention_reset,
		.results = lock_contention_results,
	},
	[KJIT_TOOL_ENTRY_COUNT] = {
		.name = "entry_count", .init = entry_count_init, .plugin = kjit_example_entry_count,
		.reset = kjit_entry_count_reset, .results = entry_count_results,
	},
	[KJIT_TOOL_CALLSTACK] = {
		.name = "callstack", .init = callstack_init, .plugin = kjit_callstack_plugin,
		.reset = kjit_callstack_reset, .results = callstack_results,
		.on_entry = KJIT_ON_ENTRY_CALLSTACK,
	},
	[KJIT_TOOL_KCOV] = {
		.name = "kcov", .init = kcov_tool_init, .plugin = kjit_kcov_plugin,
		.results = kcov_results, .entry_filter = KJIT_ENTRY_FILTER_KCOV_TASKS,
	},
	[KJIT_TOOL_BRANCHES] = {
		.name = "branches", .init = branches_init, .plugin = kjit_example_branch_profile,
		.reset = branches_reset, .results = branches_results,
	},
};

const struct kjit_builtin_tool *kjit_builtin_tool(u32 id)
{
	return id <= KJIT_TOOL_MAX ? &tools[id] : NULL;
}

u32 kjit_tool_entry_hooks(u32 id)
{
	return tools[id].entry_filter | tools[id].on_entry;
}

const char *kjit_tool_name(u32 id)
{
	return tools[id].name;
}

/* The callstack ring is vmalloc'ed, not in the data window: freed here. */
void kjit_builtin_tools_exit(void)
{
	kjit_callstack_free();
}
