// SPDX-License-Identifier: GPL-2.0
/* Entry redirection: an ftrace_ops with SAVE_REGS|IPMODIFY on a function's
 * fentry site (as livepatch does) moves the return of the fentry call from
 * func+MCOUNT_INSN_SIZE to the code-cache translation of func+MCOUNT_INSN_SIZE.
 * Registers and stack are exactly as at the original site; the function's
 * return address (parent_ip) is a stop address, so the task leaves the cache
 * through a gate when the function returns.
 *
 * Which tasks are in the cache: a small lock-free table of task pointers,
 * entered in the ftrace handler and left in the gate helpers when the engine
 * returns an original address (every exit from the cache to native code goes
 * through a gate).  It is the per-task guard (a task already in kjit is not
 * redirected again, e.g. from an interrupt on its stack) and the in-flight
 * count that unload waits for. */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/delay.h>
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

static struct task_struct *kjit_tasks[KJIT_TASK_SLOTS];
static unsigned long kjit_stops[KJIT_STOP_SLOTS];
static atomic64_t c_entries, c_declined, c_skipped, c_leaves, c_in_flight;
static bool kjit_entry_enabled;

static bool task_in_kjit(struct task_struct *t)
{
	int i;

	for (i = 0; i < KJIT_TASK_SLOTS; i++)
		if (READ_ONCE(kjit_tasks[i]) == t)
			return true;
	return false;
}

static bool task_enter(struct task_struct *t)
{
	int i;

	for (i = 0; i < KJIT_TASK_SLOTS; i++) {
		if (!READ_ONCE(kjit_tasks[i]) && !cmpxchg(&kjit_tasks[i], NULL, t)) {
			atomic64_inc(&c_in_flight);
			return true;
		}
	}
	return false;
}

static void task_leave(struct task_struct *t, bool counted)
{
	int i;

	for (i = 0; i < KJIT_TASK_SLOTS; i++) {
		if (READ_ONCE(kjit_tasks[i]) == t) {
			WRITE_ONCE(kjit_tasks[i], NULL);
			atomic64_dec(&c_in_flight);
			if (counted)
				atomic64_inc(&c_leaves);
			return;
		}
	}
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
		task_leave(current, true);
	return t;
}

u64 kjit_linux_indirect_miss(u64 stub_ret, u64 target)
{
	u64 t = kjit_engine_indirect_miss(stub_ret, target);

	if (!kjit_engine_is_cache_address(t))
		task_leave(current, true);
	return t;
}

static void kjit_ftrace_handler(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	u64 target;

	if (!regs || !READ_ONCE(kjit_entry_enabled) || in_nmi() ||
	    task_in_kjit(current)) {
		atomic64_inc(&c_skipped);
		return;
	}
	if (!ensure_stop(parent_ip) || !task_enter(current)) {
		atomic64_inc(&c_skipped);
		return;
	}
	target = kjit_engine_enter(ip + MCOUNT_INSN_SIZE);
	if (!kjit_engine_is_cache_address(target)) {
		/* Declined: regs->ip still points after the fentry call. */
		task_leave(current, false);
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
	o->leaves = atomic64_read(&c_leaves);
	o->in_flight = atomic64_read(&c_in_flight);
}

int kjit_entry_init(void)
{
	WRITE_ONCE(kjit_entry_enabled, true);
	return 0;
}

/* Detaches everything and waits until no task can be in the cache: first
 * the in-flight count (tasks leave at the entry function's return), then an
 * RCU-tasks grace period for anything preempted on its last cache
 * instruction after leaving the table. */
void kjit_detach_all(void)
{
	int waited = 0;

	kjit_detach("*");
	while (atomic64_read(&c_in_flight) > 0 && waited < 10000) {
		msleep(10);
		waited += 10;
	}
	if (atomic64_read(&c_in_flight) > 0)
		pr_warn("kjit: %lld task(s) still marked in the cache after 10 s\n",
			(long long)atomic64_read(&c_in_flight));
	synchronize_rcu_tasks();
}

void kjit_entry_exit(void)
{
	WRITE_ONCE(kjit_entry_enabled, false);
	kjit_detach_all();
}
