// SPDX-License-Identifier: GPL-2.0
/* Following a task through a sleep.
 *
 * A translated call into the scheduler funnel (__schedule, never
 * translated) pushes the original return address R, like every translated
 * call, and jumps to kjit_gate_sched (dispatch_gates.S) instead of the
 * funnel.  The gate records the return slot S, puts the address of
 * kjit_sched_return there and goes on into __schedule.  Then one of two
 * things happens:
 *  - __schedule switches to another task.  The sched_switch tracepoint
 *    (probe below) runs on the same CPU, still before the switch: it puts R
 *    back into S, so that while the task sleeps its stack holds only
 *    original return addresses, and parks (task, S, R) in the sleepers'
 *    table.  When a CPU later switches back to the task (the same probe,
 *    with the task as `next`), the entry is taken out, S gets
 *    kjit_sched_return again and that CPU's kjit_resume_pc gets R.
 *  - __schedule picks the same task again (no switch, no tracepoint): S
 *    still holds the stub, kjit_resume_pc still holds R.
 * Either way __schedule returns into kjit_sched_return on the CPU that set
 * kjit_resume_pc, with preemption still disabled by the funnel's caller
 * (schedule, preempt_schedule_common, ...): no other task runs on that CPU
 * in between, so the per-CPU value is the task's own.  The stub asks the
 * engine for R's translation and continues there, or at R natively.
 *
 * Safety.
 *  - Unwinders, /proc/PID/stack, livepatch: a task that is not running has
 *    only original return addresses in its frames (S holds R from the switch
 *    out to the switch back in; the stub's address is there only while the
 *    task runs with preemption off).
 *  - Migration: the sleeper's entry is per task; kjit_resume_pc is written by
 *    the CPU that switches the task in, which is the CPU it returns on.
 *  - Nested sleeps: between the switch in and the return into the stub the
 *    task cannot sleep (preemption is off), and every later sleep from the
 *    cache goes through the gate again.
 *  - Epoch reuse: nothing here holds a cache address; R is translated when
 *    the task returns, by the engine, like any indirect miss.
 *  - A re-created engine (kjitctl config, record, kcov enable): pausing
 *    starts a new generation.  A task parked in an earlier one continues
 *    natively when it wakes (counted as left_off): its invocation belongs
 *    to the engine, tool and stop addresses that are gone, and in the new
 *    engine it would run on past its entry's return as if that caller had
 *    been attached.
 *  - Unload: kjit_sched_resume_exit stops the gate from retargeting, then
 *    waits for an RCU grace period (every task between the gate and its
 *    switch out, or between its switch in and the stub's return, has
 *    preemption off), then removes the probe.  Sleepers parked at that time
 *    hold R in S and continue natively.
 *  - A task that dies in the funnel (do_task_dead) never returns: its slot is
 *    restored and nothing is parked.
 *  - Other tools on __schedule (notrace: no ftrace user, but kprobes): a
 *    kretprobe (rethook) replaces the return slot with its own trampoline
 *    at the funnel's entry and keeps the address it found.  The gate does
 *    not retarget while __schedule's entry is hooked (an int3 or a jump:
 *    the task then continues natively after the switch, counted as
 *    left_hooked), so the tool records R and fires exactly as natively.  A hook enabled between the gate and the
 *    funnel's entry finds the stub in the slot and keeps it: the switch out
 *    then sees another address in the slot, leaves it alone and parks the
 *    task as "foreign"; the switch in sets kjit_resume_pc without touching
 *    the slot, and the tool's trampoline returns into the stub as it would
 *    have returned into R.  Such a task holds the stub's address in the
 *    tool's record while it sleeps, so unloading waits for it to wake.
 */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/percpu.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include <linux/tracepoint.h>
#include <linux/delay.h>
#include <linux/uaccess.h>
#include "sched_resume.h"
#include "reclaim_work.h"
#include "entry_guard.h"
#include "symbols.h"
#include "kjit/engine.h"

static unsigned int sleepers_max = 4096;
module_param(sleepers_max, uint, 0444);
MODULE_PARM_DESC(sleepers_max, "tasks asleep in an instrumented invocation that can be followed at once (more are counted as not followed)");

static bool follow_sleeps = true;
module_param(follow_sleeps, bool, 0444);
MODULE_PARM_DESC(follow_sleeps, "follow invocations through the scheduler (0: they leave the cache at their call into it, as native calls; for measuring what following costs)");

/* How far from its hash position a sleeper may be parked. */
#define KJIT_SLEEPER_PROBES 16

struct kjit_sleeper {
	struct task_struct *task;   /* NULL: free */
	u64 *slot;
	u64 ret;
	bool foreign;               /* another tool's trampoline holds the slot */
	u32 gen;                    /* the engine generation it slept in */
};

/* What the gate leaves for this CPU's switch or return. */
struct kjit_pending {
	struct task_struct *task;
	u64 *slot;
	u64 ret;
	u32 gen;
};

/* Engines re-created since load (kjit_sched_resume_pause). */
static u32 generation;
/* Set at the switch in of a foreign sleeper of an earlier generation: the
 * stub, which its tool's trampoline returns into, goes on natively. */
static DEFINE_PER_CPU(bool, resume_native);

static DEFINE_PER_CPU(struct kjit_pending, pending);
/* Read by kjit_sched_return (dispatch_gates.S). */
DEFINE_PER_CPU(u64, kjit_resume_pc);
/* __schedule: kjit_gate_sched goes on there. */
u64 kjit_schedule_fn;

static struct kjit_sleeper *sleepers;
static unsigned int sleepers_bits;
/* Entries parked per home position.  While anything is parked the probe
 * looks for every task switched in: one that no entry can belong to (its
 * home counts none) is told apart with one load instead of
 * KJIT_SLEEPER_PROBES, and nearly every task switched in is such a one. */
static atomic_t *homes;
static atomic_t nsleeping, nforeign;
static u64 return_stub;
static bool active;             /* the gate retargets (READ_ONCE) */
static struct tracepoint *tp_switch;
static atomic64_t c_followed, c_resumed, c_left_full, c_left_off, c_left_native, c_exits, c_lost;
static atomic64_t c_left_hooked;

static struct kjit_sleeper *sleeper_at(struct task_struct *t, unsigned int i)
{
	return &sleepers[(hash_ptr(t, sleepers_bits) + i) & ((1u << sleepers_bits) - 1)];
}

static atomic_t *home_of(struct task_struct *t)
{
	return &homes[hash_ptr(t, sleepers_bits)];
}

static bool park(struct task_struct *t, u64 *slot, u64 ret, bool foreign, u32 gen)
{
	unsigned int i;

	for (i = 0; i < KJIT_SLEEPER_PROBES; i++) {
		struct kjit_sleeper *s = sleeper_at(t, i);

		if (cmpxchg(&s->task, NULL, t) == NULL) {
			s->slot = slot;
			s->ret = ret;
			s->foreign = foreign;
			s->gen = gen;
			if (foreign)
				atomic_inc(&nforeign);
			atomic_inc(home_of(t));
			atomic_inc(&nsleeping);
			return true;
		}
	}
	return false;
}

/* A foreign sleeper must be parked (only the table knows its R): it takes
 * the place of an ordinary sleeper, which then simply is not followed (its
 * slot holds its original return address).  Only when every entry is
 * foreign, which takes as many tasks hooked in the few instructions
 * between the gate and the funnel's entry, is R put back in the slot: the
 * other tool then misses that return. */
static void park_foreign_evicting(struct task_struct *t, u64 *slot, u64 ret, u32 gen)
{
	unsigned int i;

	if (park(t, slot, ret, true, gen)) {   /* an entry freed meanwhile */
		atomic64_inc(&c_followed);
		return;
	}
	for (i = 0; i < KJIT_SLEEPER_PROBES; i++) {
		struct kjit_sleeper *s = sleeper_at(t, i);
		struct task_struct *victim = READ_ONCE(s->task);

		if (victim && !READ_ONCE(s->foreign) && cmpxchg(&s->task, victim, t) == victim) {
			s->slot = slot;
			s->ret = ret;
			s->foreign = true;
			s->gen = gen;
			atomic_dec(home_of(victim));
			atomic_inc(home_of(t));
			atomic_inc(&nforeign);
			atomic64_inc(&c_left_full);   /* the victim's sleep */
			atomic64_inc(&c_followed);
			return;
		}
	}
	WARN_ONCE(1, "kjit: no room for a sleeper under another tool's hook");
	WRITE_ONCE(*slot, ret);
	atomic64_inc(&c_lost);
}

/* The task's entry, taken out of the table; false if it has none.  A task
 * is parked by the CPU that switched it out and taken by the CPU that
 * switches it in, which the scheduler orders after the switch out: that
 * CPU sees the task's entry and its home's count. */
static bool unpark(struct task_struct *t, u64 **slot, u64 *ret, bool *foreign, u32 *gen)
{
	unsigned int i;

	if (!atomic_read(home_of(t)))
		return false;

	for (i = 0; i < KJIT_SLEEPER_PROBES; i++) {
		struct kjit_sleeper *s = sleeper_at(t, i);

		if (READ_ONCE(s->task) != t)
			continue;
		*slot = s->slot;
		*ret = s->ret;
		*foreign = s->foreign;
		*gen = s->gen;
		/* Claimed, not just cleared: a foreign sleeper may have taken
		 * the entry over meanwhile (park_foreign_evicting). */
		if (cmpxchg_release(&s->task, t, NULL) != t)
			continue;
		if (*foreign)
			atomic_dec(&nforeign);
		atomic_dec(home_of(t));
		atomic_dec(&nsleeping);
		return true;
	}
	return false;
}

/* Whether another tool hooks __schedule's entry: that tool must see the
 * return address the task really has.  __schedule is notrace (no fentry
 * site), so a hook there is a kprobe's int3 or an optimized kprobe's jmp
 * (a call, should a kernel trace it, counts too); its own first
 * instruction is none of these. */
static bool funnel_hooked(void)
{
	u8 op;

	if (copy_from_kernel_nofault(&op, (const void *)(unsigned long)kjit_schedule_fn, 1))
		return true;
	return op == 0xcc || op == 0xe8 || op == 0xe9;
}

/* From kjit_gate_sched, before __schedule, with preemption off. */
void kjit_linux_sched_call(u64 *slot);
void kjit_linux_sched_call(u64 *slot)
{
	struct kjit_pending *p;

	if (!READ_ONCE(active) || preemptible()) {
		atomic64_inc(&c_left_off);
		return;
	}
	if (funnel_hooked()) {
		atomic64_inc(&c_left_hooked);
		return;
	}
	p = this_cpu_ptr(&pending);
	p->task = current;
	p->slot = slot;
	p->ret = *slot;
	p->gen = READ_ONCE(generation);
	this_cpu_write(kjit_resume_pc, *slot);
	*slot = return_stub;
}

/* From kjit_sched_return: where the task goes on after __schedule. */
u64 kjit_linux_sched_resume(u64 ret);
u64 kjit_linux_sched_resume(u64 ret)
{
	struct kjit_pending *p = this_cpu_ptr(&pending);
	bool g;
	u64 t;

	if (p->task == current)
		p->task = NULL;          /* __schedule did not switch */
	if (unlikely(this_cpu_read(resume_native))) {
		this_cpu_write(resume_native, false);
		atomic64_inc(&c_left_off);
		return ret;
	}
	/* a way into the engine like the gates (entry_guard.h); preemption is
	 * still off here */
	g = kjit_guard_enter();
	t = kjit_engine_resume(ret);
	kjit_reclaim_kick();
	kjit_guard_leave(g);
	if (kjit_engine_is_cache_address(t))
		atomic64_inc(&c_resumed);
	else
		atomic64_inc(&c_left_native);
	return t;
}

static void probe_switch(void *data, bool preempt, struct task_struct *prev,
			 struct task_struct *next, unsigned int prev_state)
{
	struct kjit_pending *p = this_cpu_ptr(&pending);
	bool foreign;
	u64 *slot;
	u64 ret;
	u32 gen;

	if (p->task == prev) {
		p->task = NULL;
		/* Another tool's trampoline in the slot (hooked after the gate)
		 * returns into the stub: leave it, keep R for the switch in. */
		foreign = READ_ONCE(*p->slot) != return_stub;
		if (!foreign)
			WRITE_ONCE(*p->slot, p->ret);   /* asleep: original addresses only */
		if (prev_state == TASK_DEAD)
			atomic64_inc(&c_exits);
		else if (park(prev, p->slot, p->ret, foreign, p->gen))
			atomic64_inc(&c_followed);
		else if (foreign)
			park_foreign_evicting(prev, p->slot, p->ret, p->gen);
		else
			atomic64_inc(&c_left_full);
	}
	if (!atomic_read(&nsleeping) || !unpark(next, &slot, &ret, &foreign, &gen))
		return;
	if (foreign) {
		/* The tool's trampoline returns into the stub whatever happens. */
		this_cpu_write(kjit_resume_pc, ret);
		this_cpu_write(resume_native, gen != READ_ONCE(generation));
		return;
	}
	if (!READ_ONCE(active) || gen != READ_ONCE(generation)) {
		atomic64_inc(&c_left_off);
		return;
	}
	if (READ_ONCE(*slot) != ret) {
		atomic64_inc(&c_lost);
		return;
	}
	this_cpu_write(kjit_resume_pc, ret);
	WRITE_ONCE(*slot, return_stub);
}

static void find_switch_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		tp_switch = tp;
}

int kjit_sched_resume_init(void (*stub)(void))
{
	unsigned int n = roundup_pow_of_two(clamp(sleepers_max, 64u, 1u << 20));
	int ret;

	if (!follow_sleeps) {
		pr_info("follow_sleeps=0: invocations leave the cache where they call the scheduler\n");
		return -EPERM;
	}
	return_stub = (u64)(unsigned long)stub;
	kjit_schedule_fn = kjit_ksym("__schedule");
	for_each_kernel_tracepoint(find_switch_tp, NULL);
	if (!kjit_schedule_fn || !tp_switch) {
		pr_warn("scheduler hook unavailable: invocations that sleep continue natively\n");
		return -ENOENT;
	}
	sleepers = vzalloc(sizeof(*sleepers) * n);
	homes = vzalloc(sizeof(*homes) * n);
	if (!sleepers || !homes) {
		vfree(sleepers);
		vfree(homes);
		sleepers = NULL;
		homes = NULL;
		return -ENOMEM;
	}
	sleepers_bits = ilog2(n);
	ret = tracepoint_probe_register(tp_switch, probe_switch, NULL);
	if (ret) {
		pr_warn("sched_switch probe: %d: invocations that sleep continue natively\n", ret);
		vfree(sleepers);
		vfree(homes);
		sleepers = NULL;
		homes = NULL;
		return ret;
	}
	WRITE_ONCE(active, true);
	return 0;
}

bool kjit_sched_resume_active(void)
{
	return READ_ONCE(active);
}

void kjit_sched_resume_pause(void)
{
	if (!sleepers)
		return;
	WRITE_ONCE(active, false);
	WRITE_ONCE(generation, generation + 1);
	synchronize_rcu();   /* as at exit: nobody is between gate and switch */
}

void kjit_sched_resume_unpause(void)
{
	if (sleepers)
		WRITE_ONCE(active, true);
}

void kjit_sched_resume_exit(void)
{
	if (!sleepers)
		return;
	WRITE_ONCE(active, false);
	/* Every task that the gate retargeted is past its switch out or its
	 * return into the stub: both happen with preemption off. */
	synchronize_rcu();
	/* A foreign sleeper returns into the stub through another tool's
	 * trampoline, with the probe setting its resume pc: wait for it. */
	if (atomic_read(&nforeign))
		pr_info("waiting for %d tasks asleep under another tool's hook on __schedule\n",
			atomic_read(&nforeign));
	while (atomic_read(&nforeign))
		msleep(20);
	synchronize_rcu();
	tracepoint_probe_unregister(tp_switch, probe_switch, NULL);
	tracepoint_synchronize_unregister();
	vfree(sleepers);
	vfree(homes);
	sleepers = NULL;
	homes = NULL;
}

void kjit_sleep_counters(struct kjit_sleep_counters *o)
{
	o->followed = atomic64_read(&c_followed);
	o->resumed = atomic64_read(&c_resumed);
	o->sleeping = atomic_read(&nsleeping);
	o->left_full = atomic64_read(&c_left_full);
	o->left_off = atomic64_read(&c_left_off);
	o->left_native = atomic64_read(&c_left_native);
	o->task_exits = atomic64_read(&c_exits);
	o->lost = atomic64_read(&c_lost);
	o->left_hooked = atomic64_read(&c_left_hooked);
}

void kjit_sleep_counters_reset(void)
{
	atomic64_set(&c_followed, 0);
	atomic64_set(&c_resumed, 0);
	atomic64_set(&c_left_full, 0);
	atomic64_set(&c_left_off, 0);
	atomic64_set(&c_left_native, 0);
	atomic64_set(&c_exits, 0);
	atomic64_set(&c_lost, 0);
	atomic64_set(&c_left_hooked, 0);
}
