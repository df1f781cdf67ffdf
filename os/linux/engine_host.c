// SPDX-License-Identifier: GPL-2.0
/* The engine's lifetime, owned in one place.
 *
 * The host lock (a mutex) serialises every call that creates, destroys or
 * flushes the engine or changes its plugin set.  It is taken only from
 * process context, never under the engine lock (a raw spinlock, innermost:
 * os/linux/README.md), and the engine takes its own lock inside these calls.
 * kjit_engine_flush sleeps (it quiesces the retired epoch), so does
 * everything here. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include "engine_host.h"
#include "entry_table.h"
#include "extable.h"
#include "shim.h"
#include "kjit/engine.h"

static DEFINE_MUTEX(kjit_host_mutex);
static struct kjit_os_memory base_mem;
static struct kjit_os_kernel_facts facts;
static const struct kjit_plugin *tool_plugin;   /* the built-in tool's, or NULL */
static bool engine_up;
/* engine_up for kjit_host_retire, which cannot take the host lock: cleared
 * (and every retire in flight waited for) before the engine is re-created
 * or destroyed, set once it is up. */
static bool retire_ok;
static u64 cache_size;
/* Plugins added through kjit_host_add_plugin (an armed capture).  While
 * any is registered, re-creating the engine is refused: the new engine
 * would start without them and their owner would not know. */
static unsigned int added_plugins;

int kjit_host_init(const struct kjit_os_memory *mem, void (*gate_direct)(void),
		   void (*gate_indirect)(void), void (*gate_sched)(void))
{
	base_mem = *mem;
	kjit_shim_fill_facts(&facts);
	facts.gate_direct = (u64)(unsigned long)gate_direct;
	facts.gate_indirect = (u64)(unsigned long)gate_indirect;
	facts.gate_sched = (u64)(unsigned long)gate_sched;
	if (!facts.return_thunk || !facts.fentry || !facts.schedule_funnel) {
		pr_err("kernel facts incomplete\n");
		return -ENOENT;
	}
	return 0;
}

/* Retires run with preemption off (a kprobe handler): after this
 * synchronize_rcu none is still inside the engine. */
static void retire_off(void)
{
	if (!READ_ONCE(retire_ok))
		return;
	WRITE_ONCE(retire_ok, false);
	synchronize_rcu();
}

static void stop_locked(void)
{
	if (tool_plugin)
		kjit_unregister_plugin(tool_plugin);
	tool_plugin = NULL;
	if (engine_up)
		kjit_engine_fini();
	engine_up = false;
	WRITE_ONCE(added_plugins, 0);   /* they went with the engine */
}

int kjit_host_start(const struct kjit_engine_options *opt, u64 cache_bytes,
		    int (*tool_init)(void), const struct kjit_plugin *plugin)
{
	struct kjit_os_memory mem = base_mem;
	u64 lo0, hi0, lo1, hi1;
	int ret;

	if (cache_bytes)
		mem.code_size = min_t(u64, cache_bytes, base_mem.code_size);
	mutex_lock(&kjit_host_mutex);
	ret = -EBUSY;
	if (added_plugins)
		goto out;
	retire_off();
	stop_locked();
	kjit_extable_reset();
	ret = kjit_engine_init(&mem, &facts, opt);
	if (ret)
		goto out;
	engine_up = true;
	/* Nothing is translated yet (entries are paused by the caller). */
	ret = -EINVAL;
	if (kjit_engine_epoch_range(0, &lo0, &hi0) && kjit_engine_epoch_range(1, &lo1, &hi1))
		ret = kjit_extable_layout(lo0, hi0, lo1, hi1);
	if (ret) {
		stop_locked();
		goto out;
	}
	ret = tool_init ? tool_init() : 0;
	if (!ret && plugin)
		ret = kjit_register_plugin(plugin);
	if (ret) {
		stop_locked();
		goto out;
	}
	tool_plugin = plugin;
	WRITE_ONCE(cache_size, mem.code_size);
	WRITE_ONCE(retire_ok, true);
out:
	kjit_entry_table_invalidate();   /* translations and stops of the old engine */
	mutex_unlock(&kjit_host_mutex);
	return ret;
}

void kjit_host_stop(void)
{
	mutex_lock(&kjit_host_mutex);
	retire_off();
	stop_locked();
	mutex_unlock(&kjit_host_mutex);
}

void kjit_host_exit(void)
{
	kjit_host_stop();
}

int kjit_host_flush(bool wait)
{
	if (wait)
		mutex_lock(&kjit_host_mutex);
	else if (!mutex_trylock(&kjit_host_mutex))
		return -EBUSY;
	if (engine_up)
		kjit_engine_flush();
	mutex_unlock(&kjit_host_mutex);
	return 0;
}

bool kjit_host_retire(void)
{
	bool retired;

	preempt_disable();
	retired = READ_ONCE(retire_ok) && kjit_engine_retire();
	preempt_enable();
	if (retired)
		kjit_entry_table_invalidate();   /* the trampoline enters nothing retired */
	return retired;
}

int kjit_host_retire_range(unsigned long addr, unsigned long len)
{
	int retired;

	preempt_disable();
	retired = READ_ONCE(retire_ok) ? kjit_engine_retire_range(addr, len) : 0;
	preempt_enable();
	if (retired > 0)
		kjit_entry_table_invalidate();   /* as kjit_host_retire */
	return retired;
}

int kjit_host_reclaim(void)
{
	mutex_lock(&kjit_host_mutex);
	if (engine_up)
		kjit_engine_reclaim();
	mutex_unlock(&kjit_host_mutex);
	return 0;
}

int kjit_host_add_plugin(const struct kjit_plugin *p)
{
	int ret = -ENODEV;

	mutex_lock(&kjit_host_mutex);
	if (engine_up)
		ret = kjit_register_plugin(p);
	if (!ret)
		WRITE_ONCE(added_plugins, added_plugins + 1);
	/* an on_entry plugin sees every entry: none may skip C any more */
	kjit_entry_table_invalidate();
	mutex_unlock(&kjit_host_mutex);
	return ret;
}

int kjit_host_remove_plugin(const struct kjit_plugin *p)
{
	int ret = -ENODEV;

	mutex_lock(&kjit_host_mutex);
	if (engine_up)
		ret = kjit_unregister_plugin(p);
	if (!ret && added_plugins)
		WRITE_ONCE(added_plugins, added_plugins - 1);
	mutex_unlock(&kjit_host_mutex);
	return ret;
}

bool kjit_host_plugins_added(void)
{
	return READ_ONCE(added_plugins) != 0;
}

u64 kjit_host_cache_limit(void)
{
	return base_mem.code_size;
}

u64 kjit_host_cache_size(void)
{
	return READ_ONCE(cache_size);
}
