// SPDX-License-Identifier: GPL-2.0
/* Entry redirection: an ftrace_ops with SAVE_REGS|IPMODIFY on a function's
 * fentry site (as livepatch does) moves the return of the fentry call from
 * func+MCOUNT_INSN_SIZE to the code-cache translation of func+MCOUNT_INSN_SIZE.
 * Registers and stack are exactly as at the original site; the function's
 * return address (parent_ip) is a stop address, so the task leaves the cache
 * through a gate when the function returns.
 *
 * Leaving the cache is NOT always visible to the host: the engine also
 * jumps to native code directly (native exits, calls to functions it does not
 * translate).  So there is no per-task "in kjit" state.  None is needed:
 *  - re-entry is correct: a task that reaches an attached function's ftrace
 *    trampoline has already left the cache (the call runs natively), so
 *    redirecting it again starts a fresh, correct translation;
 *  - the only recursion hazard is the engine lock: the shim calls traceable
 *    kernel functions while holding it, so the handler skips when this CPU
 *    holds the lock (kjit_os_lock_held_here());
 *  - unload safety: no task can sleep with a code-cache address as its resume
 *    point (translated calls push original return addresses and __schedule is
 *    never translated, see shim.c), so after the ftrace ops are gone an
 *    RCU-tasks grace period (tasks preempted in the cache) plus an RCU grace
 *    period (irq/softirq code in the cache) leave the cache unused.
 *
 * When the engine's active code-cache epoch fills up it asks for a flush from
 * a context that may sleep (kjit_engine_reclaim_pending()): a work item. */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <linux/hardirq.h>
#include <linux/rcupdate_wait.h>
#include "kjit_linux.h"
#include "kjit/engine.h"
#include "uapi/kjit_ioctl.h"

#define KJIT_MAX_ATTACH 16
#define KJIT_TASK_SLOTS 256
#define KJIT_STOP_SLOTS 64

struct kjit_attachment {
	struct ftrace_ops ops;
	unsigned long addr;
	bool used;
	char name[KJIT_NAME_MAX];
};

static DEFINE_MUTEX(kjit_attach_mutex);
static struct kjit_attachment kjit_att[KJIT_MAX_ATTACH];
static int kjit_natt;

static unsigned long kjit_stops[KJIT_STOP_SLOTS];
static atomic64_t c_entries, c_declined, c_skipped, c_escapes, c_reclaims;
static bool kjit_entry_enabled;

static void kjit_reclaim_fn(struct work_struct *w)
{
	atomic64_inc(&c_reclaims);
	kjit_engine_flush();
}
static DECLARE_WORK(kjit_reclaim_work, kjit_reclaim_fn);

static void maybe_reclaim(void)
{
	if (unlikely(kjit_engine_reclaim_pending()) && READ_ONCE(kjit_entry_enabled))
		schedule_work(&kjit_reclaim_work);
}

/* Registers `ret` as a stop address once; false if the engine refused. */
static bool ensure_stop(unsigned long ret)
{
	int i;

	for (i = 0; i < KJIT_STOP_SLOTS; i++) {
		unsigned long v = READ_ONCE(kjit_stops[i]);

		if (v == ret)
			return true;
		if (!v)
			break;
	}
	if (kjit_engine_add_stop_address(ret) < 0)
		return false;
	for (i = 0; i < KJIT_STOP_SLOTS; i++)
		if (!READ_ONCE(kjit_stops[i]) && !cmpxchg(&kjit_stops[i], 0UL, ret))
			break;
	return true;
}

/* Called from dispatch_gates.S with every register saved. */
u64 kjit_linux_direct_exit(u64 stub_ret);
u64 kjit_linux_indirect_miss(u64 stub_ret, u64 target);

u64 kjit_linux_direct_exit(u64 stub_ret)
{
	u64 t = kjit_engine_direct_exit(stub_ret);

	if (!kjit_engine_is_cache_address(t))
		atomic64_inc(&c_escapes);
	maybe_reclaim();
	return t;
}

u64 kjit_linux_indirect_miss(u64 stub_ret, u64 target)
{
	u64 t = kjit_engine_indirect_miss(stub_ret, target);

	if (!kjit_engine_is_cache_address(t))
		atomic64_inc(&c_escapes);
	maybe_reclaim();
	return t;
}

static void kjit_ftrace_handler(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	u64 target;

	if (!regs || !READ_ONCE(kjit_entry_enabled) || in_nmi() ||
	    kjit_os_lock_held_here() || !ensure_stop(parent_ip)) {
		atomic64_inc(&c_skipped);
		return;
	}
	target = kjit_engine_enter(ip + MCOUNT_INSN_SIZE);
	maybe_reclaim();
	if (!kjit_engine_is_cache_address(target)) {
		/* Declined: regs->ip still points after the fentry call. */
		atomic64_inc(&c_declined);
		return;
	}
	atomic64_inc(&c_entries);
	ftrace_instruction_pointer_set(fregs, target);
}

int kjit_attach(const char *name, u64 *addr_out)
{
	struct kjit_attachment *a = NULL;
	unsigned long addr;
	int i, ret;

	addr = kjit_ksym(name);
	if (!addr)
		return -ENOENT;
	if (!kjit_os_may_translate(addr))
		return -EPERM;
	mutex_lock(&kjit_attach_mutex);
	for (i = 0; i < KJIT_MAX_ATTACH; i++) {
		if (kjit_att[i].used && kjit_att[i].addr == addr) {
			ret = -EEXIST;
			goto out;
		}
		if (!kjit_att[i].used && !a)
			a = &kjit_att[i];
	}
	ret = -ENOSPC;
	if (!a)
		goto out;
	memset(a, 0, sizeof(*a));
	a->ops.func = kjit_ftrace_handler;
	a->ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY |
		       FTRACE_OPS_FL_RECURSION;
	ret = ftrace_set_filter_ip(&a->ops, addr, 0, 0);
	if (ret) {
		ftrace_free_filter(&a->ops);
		goto out;
	}
	ret = register_ftrace_function(&a->ops);
	if (ret) {
		ftrace_free_filter(&a->ops);
		goto out;
	}
	a->addr = addr;
	a->used = true;
	strscpy(a->name, name, sizeof(a->name));
	kjit_natt++;
	*addr_out = addr;
	pr_info("kjit: attached to %s at %px\n", name, (void *)addr);
out:
	mutex_unlock(&kjit_attach_mutex);
	return ret;
}

static void detach_one(struct kjit_attachment *a)
{
	/* unregister_ftrace_function() of a module (DYNAMIC) ops already waits
	 * for RCU-tasks: no CPU is left in the handler afterwards. */
	unregister_ftrace_function(&a->ops);
	ftrace_free_filter(&a->ops);
	pr_info("kjit: detached from %s\n", a->name);
	a->used = false;
	kjit_natt--;
}

int kjit_detach(const char *name)
{
	int i, ret = -ENOENT;
	bool all = !strcmp(name, "*");

	mutex_lock(&kjit_attach_mutex);
	for (i = 0; i < KJIT_MAX_ATTACH; i++) {
		if (kjit_att[i].used && (all || !strcmp(kjit_att[i].name, name))) {
			detach_one(&kjit_att[i]);
			ret = 0;
		}
	}
	mutex_unlock(&kjit_attach_mutex);
	return all ? 0 : ret;
}

int kjit_nattached(void)
{
	return READ_ONCE(kjit_natt);
}

void kjit_entry_counters(struct kjit_entry_counters *o)
{
	o->entries = atomic64_read(&c_entries);
	o->entry_declined = atomic64_read(&c_declined);
	o->entry_skipped = atomic64_read(&c_skipped);
	o->gate_escapes = atomic64_read(&c_escapes);
	o->reclaims = atomic64_read(&c_reclaims);
}

int kjit_entry_init(void)
{
	WRITE_ONCE(kjit_entry_enabled, true);
	return 0;
}

/* Detaches everything; afterwards no task can be in the code cache (see
 * the comment at the top). */
void kjit_detach_all(void)
{
	kjit_detach("*");
	synchronize_rcu_tasks();
	synchronize_rcu();
}

void kjit_entry_exit(void)
{
	WRITE_ONCE(kjit_entry_enabled, false);
	kjit_detach_all();
	cancel_work_sync(&kjit_reclaim_work);
}
