// SPDX-License-Identifier: GPL-2.0
/* The engine's lifetime and the built-in tools.
 *
 * The six example plugins of plugins/ (the same C sources the simulator
 * uses, compiled into kjit.ko) plus callstack.c.  One tool is active.
 * Choosing a tool or engine options (KJIT_IOC_CONFIG) re-creates the engine
 * over the same memory: allowed only with nothing attached and no plugin
 * module depending on kjit, after the cache is quiesced; the tool's data is
 * allocated fresh from the data window (kjit_alloc).  Results are read in
 * place (KJIT_IOC_RESULTS) and reset in place (KJIT_IOC_ICOUNT_RESET). */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "kjit_linux.h"
#include "kjit/engine.h"
#include "kjit_examples.h"
#include "uapi/kjit_ioctl.h"

static unsigned int tool = KJIT_TOOL_ICOUNT;
module_param(tool, uint, 0444);
MODULE_PARM_DESC(tool, "built-in tool at load: 0 none, 1 icount, 2 bbcount, 3 calltrace, "
		 "4 branch_hints, 5 lock_contention, 6 entry_count, 7 callstack");
static unsigned int bb_max = 8192;
module_param(bb_max, uint, 0444);
MODULE_PARM_DESC(bb_max, "bbcount: block translations with their own counter");
static unsigned int ring_size = 8192;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size, "calltrace ring entries (power of two)");
static unsigned int cs_size = 1 << 16;
module_param(cs_size, uint, 0444);
MODULE_PARM_DESC(cs_size, "callstack ring events (power of two)");
static unsigned int ec_max = 4096;
module_param(ec_max, uint, 0444);
MODULE_PARM_DESC(ec_max, "entry_count: routines");

static DEFINE_MUTEX(kjit_cfg_mutex);
static struct kjit_os_memory base_mem;
static struct kjit_os_kernel_facts facts;
static struct kjit_ioc_config cfg;
static const struct kjit_plugin *active_plugin;
static bool engine_up;
static u64 base_count;   /* icount / bbcount total at the last reset */

static const char *const tool_names[] = {
	"none", "icount", "bbcount", "calltrace", "branch_hints", "lock_contention",
	"entry_count", "callstack",
};

const char *kjit_tool_name(u32 t)
{
	return t <= KJIT_TOOL_MAX ? tool_names[t] : "?";
}

struct kjit_tool_state kjit_tool;   /* read by the ftrace handler */

static int tool_init(u32 t, const struct kjit_plugin **p)
{
	int ret = 0;

	*p = NULL;
	switch (t) {
	case KJIT_TOOL_NONE:
		return 0;
	case KJIT_TOOL_ICOUNT:
		ret = kjit_icount_init();
		*p = kjit_example_icount();
		break;
	case KJIT_TOOL_BBCOUNT:
		ret = kjit_bbcount_init(bb_max);
		*p = kjit_example_bbcount();
		break;
	case KJIT_TOOL_CALLTRACE:
		ret = kjit_calltrace_init(ring_size);
		*p = kjit_example_calltrace();
		break;
	case KJIT_TOOL_BRANCH_HINTS:
		ret = kjit_branch_hints_init();
		*p = kjit_example_branch_hints();
		break;
	case KJIT_TOOL_LOCK_CONTENTION:
		ret = kjit_lock_contention_init();
		*p = kjit_example_lock_contention();
		break;
	case KJIT_TOOL_ENTRY_COUNT:
		ret = kjit_entry_count_init(ec_max);
		*p = kjit_example_entry_count();
		break;
	case KJIT_TOOL_CALLSTACK:
		ret = kjit_callstack_init(cs_size);
		*p = kjit_callstack_plugin();
		break;
	default:
		return -EINVAL;
	}
	return ret;
}

/* Engine + tool from `c`; caller holds kjit_cfg_mutex, nothing attached,
 * no task in the cache. */
static int bring_up(const struct kjit_ioc_config *c)
{
	struct kjit_engine_options opt;
	struct kjit_os_memory mem = base_mem;
	const struct kjit_plugin *p;
	int ret;

	kjit_engine_default_options(&opt);
	opt.inline_instrumentation = c->inline_instrumentation;
	opt.use_liveness = c->use_liveness;
	/* Flushing at every exit needs to see every exit. */
	opt.observe_exits = c->flush_every_entry ? 1 : 0;
	if (c->max_block_insns)
		opt.max_block_insns = c->max_block_insns;
	if (c->cache_kb)
		mem.code_size = min_t(u64, (u64)c->cache_kb << 10, base_mem.code_size);
	kjit_extable_reset();
	ret = kjit_engine_init(&mem, &facts, &opt);
	if (ret)
		return ret;
	engine_up = true;
	ret = tool_init(c->tool, &p);
	if (ret)
		return ret;
	if (p) {
		ret = kjit_register_plugin(p);
		if (ret)
			return ret;
	}
	active_plugin = p;
	base_count = 0;
	cfg = *c;
	kjit_tool.id = c->tool;
	kjit_tool.cache_size = mem.code_size;
	WRITE_ONCE(kjit_tool.pid, c->pid);
	WRITE_ONCE(kjit_tool.flush_every_entry, c->flush_every_entry);
	return 0;
}

static void tear_down(void)
{
	if (active_plugin)
		kjit_unregister_plugin(active_plugin);
	active_plugin = NULL;
	if (engine_up)
		kjit_engine_fini();
	engine_up = false;
}

int kjit_tools_init(const struct kjit_os_memory *mem)
{
	struct kjit_ioc_config c = {
		.size = sizeof(c), .tool = tool, .inline_instrumentation = 1, .use_liveness = 1,
	};
	int ret;

	base_mem = *mem;
	kjit_shim_fill_facts(&facts);
	if (!facts.return_thunk || !facts.fentry || !facts.schedule_funnel) {
		pr_err("kjit: kernel facts incomplete\n");
		return -ENOENT;
	}
	mutex_lock(&kjit_cfg_mutex);
	ret = bring_up(&c);
	if (ret)
		tear_down();
	mutex_unlock(&kjit_cfg_mutex);
	if (ret)
		pr_err("kjit: engine/tool init failed: %d\n", ret);
	return ret;
}

void kjit_tools_exit(void)
{
	mutex_lock(&kjit_cfg_mutex);
	tear_down();
	mutex_unlock(&kjit_cfg_mutex);
	kjit_callstack_free();
}

int kjit_tools_configure(const struct kjit_ioc_config *c)
{
	int ret;

	if (c->tool > KJIT_TOOL_MAX || c->inline_instrumentation > 1 || c->use_liveness > 1 ||
	    c->flush_every_entry > 1 || c->max_block_insns > 64 ||
	    (c->cache_kb && (c->cache_kb < 16 || c->cache_kb > (base_mem.code_size >> 10))))
		return -EINVAL;
	mutex_lock(&kjit_cfg_mutex);
	ret = -EBUSY;
	if (kjit_nattached() || !list_empty(&THIS_MODULE->source_list))
		goto out;
	/* Tasks that entered before the last detach may still be in the cache. */
	kjit_entry_quiesce();
	tear_down();
	ret = bring_up(c);
	if (ret) {
		struct kjit_ioc_config d = cfg;

		pr_err("kjit: configure failed (%d); restoring the previous configuration\n", ret);
		tear_down();
		if (bring_up(&d))
			tear_down();
	} else {
		pr_info("kjit: tool %s, inline %u, liveness %u, cache %llu KiB, flush-every-entry %u, pid %u\n",
			kjit_tool_name(c->tool), c->inline_instrumentation, c->use_liveness,
			kjit_tool.cache_size >> 10, c->flush_every_entry, c->pid);
	}
out:
	mutex_unlock(&kjit_cfg_mutex);
	return ret;
}

void kjit_tools_get_config(struct kjit_ioc_config *c)
{
	*c = cfg;
}

void kjit_tools_reset(void)
{
	u32 n, i;

	mutex_lock(&kjit_cfg_mutex);
	switch (cfg.tool) {
	case KJIT_TOOL_ICOUNT:
		/* the example keeps its counter private: remember a baseline */
		base_count = kjit_icount_result();
		break;
	case KJIT_TOOL_BBCOUNT: {
		struct kjit_bbcount_entry *e = (void *)kjit_bbcount_entries(&n);

		base_count = kjit_bbcount_total();
		for (i = 0; e && i < n; i++)
			WRITE_ONCE(e[i].count, 0);
		break;
	}
	case KJIT_TOOL_CALLTRACE: {
		struct kjit_call_ring *r = (void *)kjit_calltrace_ring();

		if (r) {
			memset(r->target, 0, (r->mask + 1) * sizeof(u64));
			WRITE_ONCE(r->head, 0);
		}
		break;
	}
	case KJIT_TOOL_BRANCH_HINTS: {
		struct kjit_branch_stats *s = (void *)kjit_branch_hints_result();

		if (s)
			memset(s, 0, sizeof(*s));
		break;
	}
	case KJIT_TOOL_LOCK_CONTENTION: {
		struct kjit_lock_stats *s = (void *)kjit_lock_contention_result();

		if (s)
			memset(s, 0, sizeof(*s));
		break;
	}
	case KJIT_TOOL_ENTRY_COUNT: {
		struct kjit_entry_count *e = (void *)kjit_entry_count_entries(&n);

		for (i = 0; e && i < n; i++)
			WRITE_ONCE(e[i].count, 0);
		break;
	}
	case KJIT_TOOL_CALLSTACK:
		kjit_callstack_reset();
		break;
	}
	mutex_unlock(&kjit_cfg_mutex);
}

u64 kjit_tools_icount(void)
{
	return cfg.tool == KJIT_TOOL_ICOUNT ? kjit_icount_result() - base_count : 0;
}

/* Copies up to `cap` records to user space; returns how many exist. */
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

static void fill_bb(u64 i, struct kjit_ioc_rec *r, const void *ctx)
{
	const struct kjit_bbcount_entry *e = ctx;

	r->pc = READ_ONCE(e[i].pc);
	r->count = READ_ONCE(e[i].count);
}

struct ring_ctx { const struct kjit_call_ring *r; u64 start; };
static void fill_ring(u64 i, struct kjit_ioc_rec *r, const void *ctx)
{
	const struct ring_ctx *c = ctx;

	r->pc = READ_ONCE(c->r->target[(c->start + i) & c->r->mask]);
}

struct ec_ctx { const struct kjit_entry_count *e; u32 *idx; };
static void fill_ec(u64 i, struct kjit_ioc_rec *r, const void *ctx)
{
	const struct ec_ctx *c = ctx;

	r->pc = READ_ONCE(c->e[c->idx[i]].pc);
	r->count = READ_ONCE(c->e[c->idx[i]].count);
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
	r->pid_type = ((u64)e->pid << 8) | type;
}

int kjit_tools_results(struct kjit_ioc_results *res)
{
	struct kjit_ioc_rec __user *u = u64_to_user_ptr(res->rec_ptr);
	u64 cap = res->nrec;
	u32 n, i, k;
	int ret = 0;

	mutex_lock(&kjit_cfg_mutex);
	memset(res->scalars, 0, sizeof(res->scalars));
	res->nrec = 0;
	res->tool = cfg.tool;
	switch (cfg.tool) {
	case KJIT_TOOL_ICOUNT:
		res->scalars[0] = kjit_icount_result() - base_count;
		break;
	case KJIT_TOOL_BBCOUNT: {
		const struct kjit_bbcount_entry *e = kjit_bbcount_entries(&n);

		res->scalars[0] = kjit_bbcount_total() - base_count;
		ret = put_recs(u, cap, &res->nrec, fill_bb, e, e ? n : 0);
		break;
	}
	case KJIT_TOOL_CALLTRACE: {
		struct ring_ctx c = { kjit_calltrace_ring(), 0 };
		u64 head, size;

		if (!c.r)
			break;
		head = READ_ONCE(c.r->head);
		size = c.r->mask + 1;
		res->scalars[0] = head;
		c.start = head > size ? head - size : 0;
		ret = put_recs(u, cap, &res->nrec, fill_ring, &c, head - c.start);
		break;
	}
	case KJIT_TOOL_BRANCH_HINTS: {
		const struct kjit_branch_stats *s = kjit_branch_hints_result();

		if (s) {
			res->scalars[0] = s->executed;
			res->scalars[1] = s->taken;
			res->scalars[2] = s->predicted_right;
			res->scalars[3] = s->predicted_wrong;
			res->scalars[4] = s->hinted;
			res->scalars[5] = s->hint_right;
		}
		break;
	}
	case KJIT_TOOL_LOCK_CONTENTION: {
		const struct kjit_lock_stats *s = kjit_lock_contention_result();

		if (s) {
			res->scalars[0] = s->attempts;
			res->scalars[1] = s->failures;
		}
		break;
	}
	case KJIT_TOOL_ENTRY_COUNT: {
		const struct kjit_entry_count *e = kjit_entry_count_entries(&n);
		struct ec_ctx c = { e, NULL };

		if (!e)
			break;
		c.idx = kvmalloc_array(n ? n : 1, sizeof(u32), GFP_KERNEL);
		if (!c.idx) {
			ret = -ENOMEM;
			break;
		}
		for (i = k = 0; i < n; i++)
			if (READ_ONCE(e[i].pc))
				c.idx[k++] = i;
		ret = put_recs(u, cap, &res->nrec, fill_ec, &c, k);
		kvfree(c.idx);
		break;
	}
	case KJIT_TOOL_CALLSTACK: {
		struct cs_ctx c;
		u64 head, size;

		c.e = kjit_callstack_ring(&head, &size);
		if (!c.e)
			break;
		c.mask = size - 1;
		res->scalars[0] = head;
		res->scalars[1] = size;
		c.start = head > size ? head - size : 0;
		ret = put_recs(u, cap, &res->nrec, fill_cs, &c, head - c.start);
		break;
	}
	}
	mutex_unlock(&kjit_cfg_mutex);
	return ret;
}

/* Flush from process context (ioctl, reclaim work, flush-every-entry). */
int kjit_tools_flush(bool wait)
{
	if (wait)
		mutex_lock(&kjit_cfg_mutex);
	else if (!mutex_trylock(&kjit_cfg_mutex))
		return -EBUSY;
	if (engine_up)
		kjit_engine_flush();
	mutex_unlock(&kjit_cfg_mutex);
	return 0;
}
