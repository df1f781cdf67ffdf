// SPDX-License-Identifier: GPL-2.0
/* The configuration: which built-in tool runs, with which engine options,
 * cache size and entry policy (pid filter, filter by task, flush-every-entry).
 *
 * Choosing a tool or engine options (KJIT_IOC_CONFIG) re-creates the engine
 * over the same memory: allowed only with nothing attached and no plugin
 * module depending on kjit, and no capture armed (the host refuses while
 * a plugin it added is registered: one check under the host lock, so a
 * capture armed concurrently is either seen or armed on the new engine),
 * and only after the cache is quiesced (tasks that entered before the
 * last detach may still run in it).  The config
 * mutex is taken before the attach mutex (attachments are made under it)
 * and the host lock (engine_host.c), never under them; it also keeps
 * results from being read while the tool is replaced. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include "config.h"
#include "builtin_tools.h"
#include "engine_host.h"
#include "sched_resume.h"
#include "entry_attach.h"
#include "entry_policy.h"
#include "task_filter.h"
#include "kjit/engine.h"

static unsigned int tool = KJIT_TOOL_ICOUNT;
module_param(tool, uint, 0444);
MODULE_PARM_DESC(tool, "built-in tool at load: 0 none, 1 icount, 2 bbcount, 3 calltrace, "
		 "4 branch_hints, 5 lock_contention, 6 entry_count, 7 callstack, 8 branches, 9 kcov");

static unsigned int trace_blocks = 8;
module_param(trace_blocks, uint, 0444);
MODULE_PARM_DESC(trace_blocks, "blocks laid out in a row where each one jumps to the next, "
		 "instead of the jump (8; 1: every block on its own)");

static unsigned int abi_returns = 1;
module_param(abi_returns, uint, 0444);
MODULE_PARM_DESC(abi_returns, "a C function's ret compares its return address with cmp, its callers "
		 "reading neither rcx nor the flags after it (1; 0: every ret keeps both)");

static DEFINE_MUTEX(kjit_config_mutex);
static struct kjit_ioc_config cfg;

static bool config_valid(const struct kjit_ioc_config *c)
{
	u64 limit_kb = kjit_host_cache_limit() >> 10;

	return c->tool <= KJIT_TOOL_MAX && c->inline_instrumentation <= 1 &&
	       c->use_liveness <= 1 && c->flush_every_entry <= 1 && c->max_block_insns <= 64 &&
	       !(c->flags & ~KJIT_CONFIG_FLAGS) &&
	       (!c->cache_kb || (c->cache_kb >= 16 && c->cache_kb <= limit_kb));
}

/* Engine + tool from `c`; caller holds the config mutex, nothing attached,
 * no task in the cache. */
static int start(const struct kjit_ioc_config *c)
{
	const struct kjit_builtin_tool *t = kjit_builtin_tool(c->tool);
	struct kjit_engine_options opt;
	u32 hooks;
	int ret;

	kjit_engine_default_options(&opt);
	opt.inline_instrumentation = c->inline_instrumentation;
	opt.use_liveness = c->use_liveness;
	/* Flushing at every exit needs to see every exit. */
	opt.observe_exits = c->flush_every_entry ? 1 : 0;
	if (c->max_block_insns)
		opt.max_block_insns = c->max_block_insns;
	opt.max_trace_blocks = trace_blocks;
	opt.abi_returns = !!abi_returns;
	/* The tool's filter by task and the policy's share no task: kcov
	 * admits the tasks that enabled coverage, nothing else. */
	if (kjit_tool_task_filter(kjit_tool_entry_hooks(c->tool)) &&
	    (c->tid || c->comm[0] || (c->flags & (KJIT_CONFIG_CGROUP | KJIT_CONFIG_CPUS))))
		return -EINVAL;
	ret = kjit_task_filter_set(c);
	if (ret)
		return ret;
	kjit_sched_resume_pause();
	ret = kjit_host_start(&opt, (u64)c->cache_kb << 10, t->init,
			      t->plugin ? t->plugin() : NULL);
	kjit_sched_resume_unpause();
	if (ret)
		return ret;
	kjit_sleep_counters_reset();   /* the engine's counts start afresh too */
	kjit_entry_reset_counts();
	cfg = *c;
	kjit_tool_started(c->tool);
	hooks = kjit_tool_entry_hooks(c->tool);
	kjit_entry_set_policy(c->pid, !!(c->flags & KJIT_CONFIG_PID_DESCENDANTS),
			      c->flush_every_entry, hooks,
			      kjit_tool_task_filter(hooks) | kjit_task_filter_bits());
	return 0;
}

int kjit_config_init(void)
{
	struct kjit_ioc_config c = {
		.size = sizeof(c), .tool = tool, .inline_instrumentation = 1, .use_liveness = 1,
	};
	int ret = -EINVAL;

	mutex_lock(&kjit_config_mutex);
	if (config_valid(&c))
		ret = start(&c);
	mutex_unlock(&kjit_config_mutex);
	if (ret)
		pr_err("engine/tool init failed: %d\n", ret);
	return ret;
}

void kjit_config_exit(void)
{
	mutex_lock(&kjit_config_mutex);
	kjit_host_stop();
	kjit_task_filter_clear();
	mutex_unlock(&kjit_config_mutex);
	kjit_builtin_tools_exit();
}

int kjit_configure(const struct kjit_ioc_config *c)
{
	int ret;

	if (!config_valid(c))
		return -EINVAL;
	mutex_lock(&kjit_config_mutex);
	ret = -EBUSY;
	if (kjit_host_plugins_added()) {
		/* Checked first so that the log names the reason: a capture
		 * also has its function attached. */
		pr_info("configure refused: a capture is in progress\n");
		goto out;
	}
	if (kjit_nattached() || !list_empty(&THIS_MODULE->source_list))
		goto out;
	/* Tasks that entered before the last detach may still be in the cache. */
	kjit_entry_quiesce();
	ret = start(c);
	if (ret == -EBUSY) {
		/* A capture armed meanwhile: the engine was left as it was. */
		pr_info("configure refused: a capture is in progress\n");
	} else if (ret) {
		struct kjit_ioc_config d = cfg;

		pr_err("configure failed (%d); restoring the previous configuration\n", ret);
		start(&d);
	} else {
		pr_info("tool %s, inline %u, liveness %u, cache %llu KiB, flush-every-entry %u, pid %u%s\n",
			kjit_tool_name(c->tool), c->inline_instrumentation, c->use_liveness,
			kjit_host_cache_size() >> 10, c->flush_every_entry, c->pid,
			(c->flags & KJIT_CONFIG_PID_DESCENDANTS) ? " and descendants" : "");
	}
out:
	mutex_unlock(&kjit_config_mutex);
	return ret;
}

/* Attachments are made under the config mutex: kjit_configure checks that
 * nothing is attached and re-creates the engine under it, so no attach (a
 * capture's own, for one) lands between that check and the new engine,
 * where entries would run into an engine being torn down. */
int kjit_config_attach(const char *name, u64 *addr_out)
{
	int ret;

	mutex_lock(&kjit_config_mutex);
	ret = kjit_attach(name, addr_out);
	mutex_unlock(&kjit_config_mutex);
	return ret;
}

int kjit_config_attach_many(const char __user *names, s32 __user *results, u32 count)
{
	int ret;

	mutex_lock(&kjit_config_mutex);
	ret = kjit_attach_many(names, results, count);
	mutex_unlock(&kjit_config_mutex);
	return ret;
}

/* Drops the pid filter and the filter by task (a session's workload is
 * gone); the tool and its results stay for whoever reads them next. */
void kjit_config_clear_pid(void)
{
	mutex_lock(&kjit_config_mutex);
	cfg.pid = 0;
	cfg.tid = 0;
	memset(cfg.comm, 0, sizeof(cfg.comm));
	cfg.flags &= ~(KJIT_CONFIG_PID_DESCENDANTS | KJIT_CONFIG_CGROUP | KJIT_CONFIG_CPUS);
	/* the trampoline stops testing the policy's bit before it is cleared */
	kjit_entry_set_policy(0, false, cfg.flush_every_entry, kjit_tool_entry_hooks(cfg.tool),
			      kjit_tool_task_filter(kjit_tool_entry_hooks(cfg.tool)));
	kjit_task_filter_clear();
	mutex_unlock(&kjit_config_mutex);
}

void kjit_config_get(struct kjit_ioc_config *c)
{
	*c = cfg;
}

u32 kjit_config_tool(void)
{
	return READ_ONCE(cfg.tool);
}

void kjit_config_reset_results(void)
{
	const struct kjit_builtin_tool *t;

	mutex_lock(&kjit_config_mutex);
	t = kjit_builtin_tool(cfg.tool);
	if (t->reset)
		t->reset();
	/* How entries ended: counted over the same period as the results. */
	kjit_engine_reset_departures();
	kjit_entry_reset_counts();
	kjit_sleep_counters_reset();
	mutex_unlock(&kjit_config_mutex);
}

int kjit_config_results(struct kjit_ioc_results *res)
{
	struct kjit_ioc_rec __user *u = u64_to_user_ptr(res->rec_ptr);
	const struct kjit_builtin_tool *t;
	u64 cap = res->nrec;
	int ret = 0;

	mutex_lock(&kjit_config_mutex);
	memset(res->scalars, 0, sizeof(res->scalars));
	res->nrec = 0;
	res->tool = cfg.tool;
	t = kjit_builtin_tool(cfg.tool);
	if (t->results)
		ret = t->results(res, u, cap);
	mutex_unlock(&kjit_config_mutex);
	return ret;
}
