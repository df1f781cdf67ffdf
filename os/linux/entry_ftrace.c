// SPDX-License-Identifier: GPL-2.0
/* Entry redirection moves the return of an attached function's fentry call
 * from func+MCOUNT_INSN_SIZE to the code-cache translation of
 * func+MCOUNT_INSN_SIZE, by one of two paths:
 *  - a direct call (entry_direct.c, entry_trampoline.S): the fentry site
 *    calls kjit's trampoline, which enters without C when entry_table.c
 *    knows the translation, and calls kjit_direct_slow otherwise;
 *  - where that cannot be used (another direct user on the function, such
 *    as a BPF trampoline; direct_entry=0), one shared ftrace_ops with
 *    SAVE_REGS|IPMODIFY (as livepatch does) and kjit_ftrace_handler.
 * Both decide an entry in entry_decide().  Registers and stack are exactly
 * as at the original site; the function's return address (parent_ip) is a
 * stop address, so the task leaves the cache through a gate when the
 * function returns.
 *
 * Leaving the cache is NOT always visible to the host: the engine also
 * jumps to native code directly (native exits, calls to functions it does not
 * translate).  So there is no per-task "in kjit" state.  None is needed:
 *  - re-entry is correct: a task that reaches an attached function's ftrace
 *    trampoline has already left the cache (the call runs natively), so
 *    redirecting it again starts a fresh, correct translation;
 *  - recursion: every way into the engine (the trampoline's C path, the
 *    handler, the gates' C side here, the scheduler stub's in
 *    sched_resume.c, every holder of the engine lock in shim.c) runs under
 *    the per-CPU guard of entry_guard.h, and an entry that finds its
 *    context's bit set runs natively (entry_nested): kjit calls kernel
 *    functions that may be attached (the lock's own, RCU's, irq_work,
 *    kallsyms), and a nested entry would recurse or spin on the engine lock
 *    this CPU holds.  The handler and the C path also take ftrace's
 *    per-context recursion guard, as ftrace's own callbacks do;
 *  - unload safety: no task can sleep with a code-cache address as its resume
 *    point (translated calls push original return addresses and __schedule is
 *    never translated, see shim.c), so after the ftrace ops are gone an
 *    RCU-tasks grace period (tasks preempted in the cache) plus an RCU grace
 *    period (irq/softirq code in the cache) leave the cache unused.
 *
 * When the engine's active code-cache epoch fills up it moves to the other
 * one and asks for the full one to be reclaimed from a context that may
 * sleep (kjit_engine_reclaim_pending()): a work item.
 * The gates and the handler run inside arbitrary kernel code, which may hold
 * a runqueue or pi lock (wake_up_new_task translated from fork), so they
 * must not queue the work themselves: queueing wakes a worker, and the
 * wake-up takes those locks.  They raise an irq_work instead (lock-free,
 * safe in any context); it runs when this CPU next enables interrupts,
 * by which time every lock taken with interrupts off has been dropped. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/trace_recursion.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <linux/irq_work.h>
#include <linux/hardirq.h>
#include <linux/rcupdate_wait.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>
#include "entry_ftrace.h"
#include "entry_direct.h"
#include "entry_table.h"
#include "entry_guard.h"
#include "attachments.h"
#include "engine_host.h"
#include "callstack.h"
#include "kcov.h"
#include "cache_mem.h"
#include "quiesce.h"
#include "shim.h"
#include "symbols.h"
#include "kjit/engine.h"
#include "uapi/kjit/ioctl.h"

/* The attachments (attachments.c).  Either path's requests are one ftrace
 * update each: attaching every system call is one, not hundreds.  kjit_ops
 * is registered while at least one address is in its filter (an empty
 * filter would mean "every function"). */

static unsigned int max_attach = 1u << 17;
module_param(max_attach, uint, 0444);
MODULE_PARM_DESC(max_attach, "functions attached at most (131072; a kernel has ~50,000 with an fentry site)");

static bool direct_entry = true;
module_param(direct_entry, bool, 0444);
MODULE_PARM_DESC(direct_entry, "enter by an ftrace direct call where possible (1), "
		 "or always by the IPMODIFY ftrace_ops (0)");

/* The attachments and ftrace updates. */
static DEFINE_MUTEX(kjit_attach_mutex);
/* The task holding kjit_attach_mutex.  Its attach or detach has ftrace
 * rewrite the sites of up to every function, in one loop that never
 * reschedules (x86's ftrace_replace_code), and when everything is attached
 * that loop's own calls are entries too: entered, each of them competed for
 * the engine lock with the translations of every other CPU, and attaching
 * 34,748 functions at once held a CPU for minutes (soft lockups).  Its
 * entries run natively (entry_decide). */
static struct task_struct *attach_owner;

static void attach_lock(void)
{
	mutex_lock(&kjit_attach_mutex);
	WRITE_ONCE(attach_owner, current);
}

static void attach_unlock(void)
{
	WRITE_ONCE(attach_owner, NULL);
	mutex_unlock(&kjit_attach_mutex);
}
static struct ftrace_ops kjit_ops;
static bool kjit_ops_registered;
/* Parking address: a rarely called traceable function kept in the filter
 * while the ops is registered, so that detaching the last function does not
 * need unregister_ftrace_function (an RCU-tasks wait, ~1 s under TCG): the
 * ops stays registered until unload and detach is one filter update.  The
 * handler ignores the parking address. */
static unsigned long kjit_park_ip;
static unsigned long (*p_ftrace_location)(unsigned long ip);

/* Read by the ftrace handler and the gates without a lock. */
struct kjit_entry_policy {
	u32 pid;                 /* only this thread group, 0 = all */
	bool descendants;        /* ... and its descendants */
	u32 flush_every_entry;   /* flush when an entry returns (benchmarks) */
	bool callstack;          /* the callstack tool records entries */
	bool kcov_only;          /* only threads with KCOV enabled (kcov.c) */
};
static struct kjit_entry_policy policy;

static atomic64_t c_entries, c_declined, c_skipped, c_escapes, c_reclaims, c_filtered, c_exits;
static atomic64_t c_redirected;
static bool kjit_entry_enabled;

/* Set by the kick until the reclaim it queued has run: one kick per
 * reclaim.  A reclaim waits for a grace period (RCU-tasks: every task must
 * switch), and entries keep arriving meanwhile; with a kick per entry, an
 * attached function that the kick itself calls (schedule_work's) raised the
 * irq_work again from its own handler, for ever, and the task it kept
 * interrupting never switched: the grace period never ended.  A half
 * retired while the reclaim ran is kicked by the next entry. */
static atomic_t reclaim_queued;

/* Frees the retired half, keeps the active one: a flush here would also
 * retire the half the full one just handed translation to, and every
 * cache-full event would throw the freshly rebuilt working set away. */
static void kjit_reclaim_fn(struct work_struct *w)
{
	atomic64_inc(&c_reclaims);
	kjit_host_reclaim();
	atomic_set(&reclaim_queued, 0);
}
static DECLARE_WORK(kjit_reclaim_work, kjit_reclaim_fn);

static void kjit_reclaim_kick_fn(struct irq_work *w)
{
	schedule_work(&kjit_reclaim_work);
}
/* A hard irq_work, run from the interrupt even on PREEMPT_RT.  There a
 * plain one runs in a thread: the gate after __schedule kicks on every pass
 * while a reclaim is pending, each kick woke the thread and set
 * need_resched, and a task in preempt_schedule()'s loop went through
 * __schedule and the gate again for ever, never switching voluntarily, so
 * RCU-tasks (which the reclaim waits for) never ended.  Queueing the work
 * from the interrupt takes only raw locks. */
static struct irq_work kjit_reclaim_kick = IRQ_WORK_INIT_HARD(kjit_reclaim_kick_fn);

static void maybe_reclaim(void)
{
	if (unlikely(kjit_engine_reclaim_pending()) && READ_ONCE(kjit_entry_enabled) &&
	    !atomic_read(&reclaim_queued) && !atomic_xchg(&reclaim_queued, 1))
		irq_work_queue(&kjit_reclaim_kick);
}

void kjit_entry_kick_reclaim(void)
{
	maybe_reclaim();
}

/* Registers an entry's return address as a stop address once (the engine's
 * lock only the first time); false when the engine's set is full. */
static bool ensure_stop(unsigned long ret)
{
	return kjit_engine_is_stop_address(ret) || kjit_engine_add_stop_address(ret) == 0;
}

/* Leaving the cache at t; true when t is an entry's return address (the
 * entry returned). */
static bool escaped(u64 t)
{
	atomic64_inc(&c_escapes);
	if (!kjit_engine_is_stop_address(t))
		return false;
	atomic64_inc(&c_exits);
	/* Plugins' on_exit (the engine routes every exit here while one has it). */
	kjit_engine_notify_exit(t);
	return true;
}

/* flush-every-entry (benchmarks), after an entry returned: only where
 * sleeping is allowed, outside the guard; the gate's caller has left the
 * cache (its stub's return address is gone).  Under preemptible RCU a
 * read-side section leaves preemptible() true, and the flush waits for
 * grace periods: not inside one. */
static void flush_after_exit(void)
{
	if (unlikely(READ_ONCE(policy.flush_every_entry)) && preemptible() &&
	    !rcu_preempt_depth() && READ_ONCE(kjit_entry_enabled))
		kjit_host_flush(false);
}

/* Called from dispatch_gates.S with every register saved, from translated
 * code, preemptible or not.  The guard needs preemption off for its whole
 * region.  A gate finds its context's bit set only if translated code ran
 * inside kjit, which no entry allows; it goes on without touching the bit. */
u64 kjit_linux_direct_exit(u64 stub_ret);
u64 kjit_linux_indirect_miss(u64 stub_ret, u64 target);

u64 kjit_linux_direct_exit(u64 stub_ret)
{
	bool exited = false, g;
	u64 t;

	preempt_disable_notrace();
	g = kjit_guard_enter();
	t = kjit_engine_direct_exit(stub_ret);
	if (!kjit_engine_is_cache_address(t))
		exited = escaped(t);
	maybe_reclaim();
	kjit_guard_leave(g);
	preempt_enable_notrace();
	if (exited)
		flush_after_exit();
	return t;
}

u64 kjit_linux_indirect_miss(u64 stub_ret, u64 target)
{
	bool exited = false, g;
	u64 t;

	preempt_disable_notrace();
	g = kjit_guard_enter();
	t = kjit_engine_indirect_miss(stub_ret, target);
	if (!kjit_engine_is_cache_address(t))
		exited = escaped(t);
	maybe_reclaim();
	kjit_guard_leave(g);
	preempt_enable_notrace();
	if (exited)
		flush_after_exit();
	return t;
}

/* How far up the parents the descendants filter looks (as a capture's). */
#define KJIT_MAX_GENERATIONS 16

/* Whether current passes the pid filter: its thread group is `pid` or,
 * with descendants, its parent's or an ancestor's up to
 * KJIT_MAX_GENERATIONS up is (walked under RCU, as the capture does). */
static bool pid_matches(u32 pid, bool descendants)
{
	struct task_struct *t;
	bool match = false;
	int depth;

	if (!in_task())
		return false;
	if (task_tgid_nr(current) == pid)
		return true;
	if (!descendants)
		return false;
	rcu_read_lock();
	t = current;
	for (depth = 0; depth < KJIT_MAX_GENERATIONS && !match; depth++) {
		t = rcu_dereference(t->real_parent);
		if (!t || !t->pid)
			break;             /* past init: the idle task */
		match = task_tgid_nr(t) == pid;
	}
	rcu_read_unlock();
	return match;
}

/* Whether an entry to ip may take the trampoline's fast path next time:
 * nothing but the jump into the cache is needed for it. */
static bool entry_needs_nothing_else(void)
{
	return READ_ONCE(kjit_entry_enabled) && !READ_ONCE(policy.pid) &&
	       !READ_ONCE(policy.kcov_only) && !READ_ONCE(policy.callstack) &&
	       !READ_ONCE(policy.flush_every_entry) && !kjit_engine_has_entry_callbacks();
}

/* One entry to ip, called from parent_ip with the function's stack pointer
 * sp (at its return address); preemption off (the caller holds ftrace's
 * recursion guard) and this context's guard bit set.  The translation to
 * enter, or 0 to run natively. */
static __always_inline u64 entry_decide(unsigned long ip, unsigned long parent_ip, unsigned long sp)
{
	u32 pid;
	u64 target;

	if (!READ_ONCE(kjit_entry_enabled) || in_nmi() ||
	    kjit_os_lock_held_here() || (in_task() && current == READ_ONCE(attach_owner)) ||
	    !ensure_stop(parent_ip)) {
		atomic64_inc(&c_skipped);
		return 0;
	}
	pid = READ_ONCE(policy.pid);
	if ((pid && !pid_matches(pid, READ_ONCE(policy.descendants))) ||
	    (READ_ONCE(policy.kcov_only) && !kjit_kcov_task_enabled(current))) {
		atomic64_inc(&c_filtered);
		return 0;
	}
	target = kjit_engine_enter(ip + MCOUNT_INSN_SIZE);
	maybe_reclaim();
	if (!kjit_engine_is_cache_address(target)) {
		atomic64_inc(&c_declined);
		return 0;
	}
	atomic64_inc(&c_entries);
	/* every registered plugin's on_entry: the built-in tool and plugin
	 * modules alike */
	kjit_engine_notify_entry(ip);
	if (READ_ONCE(policy.callstack))
		kjit_callstack_entry(ip, sp);
	return target;
}

static void kjit_ftrace_enter(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	u64 target;

	if (!regs) {
		atomic64_inc(&c_skipped);
		return;
	}
	target = entry_decide(ip, parent_ip, regs->sp);
	if (target)
		ftrace_instruction_pointer_set(fregs, target);
}

/* The direct trampoline's C path (entry_trampoline.S): where the function
 * at ip5 - MCOUNT_INSN_SIZE goes on, ip5 itself or its translation. */
u64 kjit_direct_slow(u64 ip5, u64 parent_ip, u64 sp);
u64 kjit_direct_slow(u64 ip5, u64 parent_ip, u64 sp)
{
	unsigned long ip = ip5 - MCOUNT_INSN_SIZE;
	u32 gen = kjit_entry_table_gen();
	u64 target;
	int bit;

	if (!kjit_entry_table_attached(ip5)) {
		/* Detached, its ops still registered; or sent elsewhere by an
		 * IPMODIFY user sharing the function (entry_direct.c). */
		if (!kjit_entry_table_known(ip5))
			atomic64_inc(&c_redirected);
		return ip5;
	}
	/* nested in kjit (the fast path sent every entry here while the byte
	 * is set): exact even while preemptible, since a task-context bit is
	 * only ever set by a task that cannot be preempted */
	if (kjit_guard_held()) {
		kjit_guard_count_nested();
		return ip5;
	}
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		atomic64_inc(&c_skipped);
		return ip5;
	}
	kjit_guard_enter();            /* preemption is off: the bit was clear */
	target = entry_decide(ip, parent_ip, sp);
	if (target && entry_needs_nothing_else())
		kjit_entry_table_fill(ip5, target, parent_ip, gen);
	kjit_guard_leave(true);
	ftrace_test_recursion_unlock(bit);
	return target ? target : ip5;
}

/* The ops has no FTRACE_OPS_FL_RECURSION: ftrace then calls this directly
 * from the ops' trampoline instead of through ftrace_ops_assist_func (an
 * indirect call and ~50 instructions per entry, measured with
 * bench/profile/entry-path.sh).  The same per-context recursion guard is
 * taken here, inline; it also disables preemption for the handler as the
 * assist function did. */
static void kjit_ftrace_handler(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	int bit;

	if (unlikely(ip == kjit_park_ip))
		return;
	if (kjit_guard_held()) {       /* as in kjit_direct_slow */
		kjit_guard_count_nested();
		return;
	}
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		atomic64_inc(&c_skipped);
		return;
	}
	kjit_guard_enter();
	kjit_ftrace_enter(ip, parent_ip, fregs);
	kjit_guard_leave(true);
	ftrace_test_recursion_unlock(bit);
}

static void ops_reinit(void)
{
	memset(&kjit_ops, 0, sizeof(kjit_ops));
	kjit_ops.func = kjit_ftrace_handler;
	/* No FTRACE_OPS_FL_RECURSION: the handler guards itself (see there). */
	kjit_ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY;
}

/* Checks the function at addr (0: no such name); 0, or -errno. */
static int check_addr(unsigned long addr)
{
	if (!addr)
		return -ENOENT;
	if (!kjit_os_may_translate(addr))
		return -EPERM;
	if (addr == kjit_park_ip)
		return -EBUSY;           /* kjit's parking address */
	if (!p_ftrace_location || p_ftrace_location(addr) != addr)
		return -EINVAL;          /* no fentry site at the entry */
	if (kjit_att_find(addr))
		return -EEXIST;
	if (kjit_att_count() >= max_attach)
		return -ENOSPC;
	return 0;
}

/* Checks one name; 0 and its address, or -errno. */
static int check_target(const char *name, unsigned long *addr_out)
{
	unsigned long addr = kjit_ksym(name);
	int r = check_addr(addr);

	if (!r)
		*addr_out = addr;
	return r;
}

/* Adds `n` checked addresses to the filter and registers the ops if needed;
 * all or nothing. */
static int add_ips(unsigned long *ips, unsigned int n)
{
	int ret;

	ret = ftrace_set_filter_ips(&kjit_ops, ips, n, 0, 0);
	if (ret)
		goto undo;
	if (!kjit_ops_registered) {
		if (kjit_park_ip)
			ftrace_set_filter_ip(&kjit_ops, kjit_park_ip, 0, 0);
		ret = register_ftrace_function(&kjit_ops);
		if (ret)
			goto undo;
		kjit_ops_registered = true;
	}
	return 0;
undo:
	if (!kjit_ops_registered) {
		ftrace_free_filter(&kjit_ops);
		ops_reinit();
	} else {
		ftrace_set_filter_ips(&kjit_ops, ips, n, 1, 0);
	}
	return ret;
}

/* By a direct call if possible, else by kjit_ops; all or nothing. */
static int attach_ips(unsigned long *ips, unsigned int n, bool *direct)
{
	int ret;

	if (READ_ONCE(direct_entry)) {
		ret = kjit_direct_attach(ips, n);
		if (!ret) {
			*direct = true;
			return 0;
		}
		pr_info("direct entry refused (%d) for %u functions: the IPMODIFY ops takes them\n",
			ret, n);
	}
	*direct = false;
	return add_ips(ips, n);
}

int kjit_attach(const char *name, u64 *addr_out)
{
	struct kjit_attachment *a;
	unsigned long addr;
	bool direct = false;
	int ret;

	attach_lock();
	ret = check_target(name, &addr);
	if (!ret)
		ret = kjit_att_reserve(1);
	if (ret)
		goto out;
	a = kjit_att_new(name, addr);
	if (!a) {
		ret = -ENOMEM;
		goto out;
	}
	ret = attach_ips(&addr, 1, &direct);
	if (ret) {
		kjit_att_free(a);
		goto out;
	}
	a->direct = direct;
	kjit_att_append(a);
	*addr_out = addr;
	pr_info("attached to %s at %px\n", name, (void *)addr);
out:
	attach_unlock();
	return ret;
}

/* Checks at most this many names per call (`kjitctl list` asks for every
 * match of a glob). */
#define KJIT_MAX_CHECK (1u << 17)

int kjit_check_many(const char __user *names, s32 __user *results, u32 count)
{
	struct kjit_names b;
	int ret;
	u32 i;
	s32 r;

	if (!count || count > KJIT_MAX_CHECK)
		return -EINVAL;
	ret = kjit_names_get(&b, names, count);
	if (ret)
		return ret;
	attach_lock();
	for (i = 0; i < count; i++) {
		r = kjit_names_at(&b, i)[0] ? check_addr(b.addrs[i]) : -EINVAL;
		if (put_user(r, &results[i])) {
			ret = -EFAULT;
			break;
		}
		if (!(i & 255))
			cond_resched();
	}
	attach_unlock();
	kjit_names_free(&b);
	return ret;
}

int kjit_attach_many(const char __user *names, s32 __user *results, u32 count)
{
	struct kjit_attachment **fresh = NULL;
	struct kjit_names b = {};
	unsigned long *ips = NULL;
	u32 *idx = NULL;
	int ret = 0, n = 0, i, r;
	bool direct = false;

	if (!count || count > max_attach)
		return -EINVAL;
	ips = kvmalloc_array(count, sizeof(*ips), GFP_KERNEL);
	idx = kvmalloc_array(count, sizeof(*idx), GFP_KERNEL);
	fresh = kvmalloc_array(count, sizeof(*fresh), GFP_KERNEL);
	if (!ips || !idx || !fresh) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = kjit_names_get(&b, names, count);
	if (ret)
		goto out_free;
	attach_lock();
	for (i = 0; i < count; i++) {
		unsigned long addr = b.addrs[i];
		const char *name = kjit_names_at(&b, i);

		/* -EEXIST also for a name twice: the first one is hashed */
		r = name[0] ? check_addr(addr) : -EINVAL;
		if (!r && kjit_att_count() + n >= max_attach)
			r = -ENOSPC;
		if (!r) {
			fresh[n] = kjit_att_new(name, addr);
			if (!fresh[n])
				r = -ENOMEM;
		}
		if (!r) {
			ips[n] = addr;
			idx[n] = i;
			n++;
		}
		if (put_user(r, results + i)) {
			ret = -EFAULT;
			goto out_undo;
		}
		if (!(i & 1023))
			cond_resched();
	}
	if (!n)
		goto out_unlock;
	ret = kjit_att_reserve(n);
	if (!ret)
		ret = attach_ips(ips, n, &direct);
	if (ret) {
		for (i = 0; i < n; i++)
			if (put_user(ret, results + idx[i]))
				break;
		goto out_undo;
	}
	for (i = 0; i < n; i++) {
		fresh[i]->direct = direct;
		kjit_att_append(fresh[i]);
	}
	pr_info("attached %d functions (%u asked)\n", n, count);
	ret = n;
	goto out_unlock;
out_undo:
	for (i = 0; i < n; i++)
		kjit_att_free(fresh[i]);
out_unlock:
	attach_unlock();
out_free:
	kjit_names_free(&b);
	kvfree(ips);
	kvfree(idx);
	kvfree(fresh);
	return ret;
}

/* The real unregistration (unload, or no parking address). */
static void unregister_ops_locked(void)
{
	if (kjit_ops_registered) {
		/* a module's (DYNAMIC) ops: this waits for RCU-tasks, so no CPU
		 * is left in the handler afterwards. */
		unregister_ftrace_function(&kjit_ops);
		kjit_ops_registered = false;
	}
	ftrace_free_filter(&kjit_ops);
	ops_reinit();
}

/* Direct ops emptied by a detach are unregistered once attach and detach
 * have been quiet this long (see entry_direct.c). */
#define KJIT_DIRECT_REAP_DELAY (2 * HZ)

static void kjit_direct_reap_fn(struct work_struct *w)
{
	attach_lock();
	kjit_direct_reap();
	attach_unlock();
}
static DECLARE_DELAYED_WORK(kjit_direct_reap_work, kjit_direct_reap_fn);

static void direct_emptied(bool emptied)
{
	if (emptied && READ_ONCE(kjit_entry_enabled))
		mod_delayed_work(system_wq, &kjit_direct_reap_work, KJIT_DIRECT_REAP_DELAY);
}

/* unload: every ops goes now; otherwise direct ops are parked. */
static void unregister_all_locked(bool unload)
{
	unsigned long *ips;
	int i, n = kjit_att_count();

	if (unload)
		kjit_direct_detach_all();
	if (!n)
		return;
	if (!unload)
		direct_emptied(kjit_direct_park_all());
	ips = kvmalloc_array(n, sizeof(*ips), GFP_KERNEL);
	if (kjit_park_ip && kjit_ops_registered && ips) {
		int m = 0;

		for (i = 0; i < n; i++)
			if (!kjit_att_at(i)->direct)
				ips[m++] = kjit_att_at(i)->addr;
		if (m && ftrace_set_filter_ips(&kjit_ops, ips, m, 1, 0))
			unregister_ops_locked();
	} else {
		unregister_ops_locked();
	}
	kvfree(ips);
	pr_info("detached from %d functions\n", n);
	kjit_att_clear();
}

int kjit_detach(const char *name)
{
	int i, ret = -ENOENT;

	attach_lock();
	if (!strcmp(name, "*")) {
		unregister_all_locked(false);
		ret = 0;
		goto out;
	}
	for (i = 0; i < kjit_att_count(); i++) {
		struct kjit_attachment *a = kjit_att_at(i);

		if (strcmp(a->name, name))
			continue;
		if (a->direct) {
			direct_emptied(kjit_direct_detach(a->addr));
			kjit_att_remove(i);
			pr_info("detached from %s\n", name);
		} else if (kjit_att_count() == 1 && !kjit_park_ip) {
			unregister_all_locked(false);
		} else {
			ret = ftrace_set_filter_ip(&kjit_ops, a->addr, 1, 0);
			if (ret)
				goto out;
			kjit_att_remove(i);
			pr_info("detached from %s\n", name);
		}
		ret = 0;
		break;
	}
out:
	attach_unlock();
	return ret;
}

int kjit_nattached(void)
{
	return kjit_att_count();
}

/* Copies attachment i's name and address; false past the end. */
bool kjit_attachment(int i, char *name, u64 *addr)
{
	bool ok = false;

	attach_lock();
	if (i < kjit_att_count()) {
		strscpy(name, kjit_att_at(i)->name, KJIT_NAME_MAX);
		*addr = kjit_att_at(i)->addr;
		ok = true;
	}
	attach_unlock();
	return ok;
}

void kjit_entry_set_policy(u32 pid, bool descendants, u32 flush_every_entry, bool callstack,
			   bool kcov_only)
{
	WRITE_ONCE(policy.kcov_only, kcov_only);
	WRITE_ONCE(policy.descendants, descendants);
	WRITE_ONCE(policy.pid, pid);
	WRITE_ONCE(policy.flush_every_entry, flush_every_entry);
	WRITE_ONCE(policy.callstack, callstack);
	/* the trampoline's fast path applies no policy: start again */
	kjit_entry_table_invalidate();
}

/* The trampoline's entries at the last reset of the results. */
static u64 fast_entries_base;

void kjit_entry_reset_counts(void)
{
	WRITE_ONCE(fast_entries_base, kjit_entry_table_fast_entries());
}

u64 kjit_entry_fast_since_reset(void)
{
	return kjit_entry_table_fast_entries() - READ_ONCE(fast_entries_base);
}

void kjit_entry_counters(struct kjit_entry_counters *o)
{
	o->entries = atomic64_read(&c_entries) + kjit_entry_table_fast_entries();
	o->fast_entries = kjit_entry_table_fast_entries();
	o->direct_ops = kjit_direct_nops();
	o->entry_declined = atomic64_read(&c_declined);
	o->entry_skipped = atomic64_read(&c_skipped);
	o->gate_escapes = atomic64_read(&c_escapes);
	o->reclaims = atomic64_read(&c_reclaims);
	o->filtered = atomic64_read(&c_filtered);
	o->exits = atomic64_read(&c_exits);
	o->redirected = atomic64_read(&c_redirected);
	o->nested = kjit_guard_nested();
}

int kjit_entry_init(void (*direct_tramp)(void))
{
	int ret;

	ret = kjit_direct_init((unsigned long)direct_tramp);
	if (ret)
		return ret;
	p_ftrace_location = (void *)kjit_ksym("ftrace_location");
	if (!p_ftrace_location)
		pr_warn("ftrace_location not found: attach refused\n");
	else {
		static const char *const park[] = { "__x64_sys_ni_syscall", "__ia32_sys_ni_syscall" };
		int i;

		for (i = 0; i < ARRAY_SIZE(park) && !kjit_park_ip; i++) {
			unsigned long a = kjit_ksym(park[i]);

			if (a && p_ftrace_location(a) == a)
				kjit_park_ip = a;
		}
	}
	ops_reinit();
	WRITE_ONCE(kjit_entry_enabled, true);
	return 0;
}

/* No task can be in the code cache after this unless something is attached
 * (see the comment at the top). */
void kjit_entry_quiesce(void)
{
	unsigned long lo, hi;

	kjit_mem_cache_range(&lo, &hi);
	kjit_quiesce_range(lo, hi);
}

static void kjit_detach_all(void)
{
	attach_lock();
	unregister_all_locked(true);
	unregister_ops_locked();
	attach_unlock();
	kjit_entry_quiesce();
}

void kjit_entry_exit(void)
{
	WRITE_ONCE(kjit_entry_enabled, false);
	kjit_detach_all();
	/* a detach that saw kjit_entry_enabled may have queued it before */
	cancel_delayed_work_sync(&kjit_direct_reap_work);
	irq_work_sync(&kjit_reclaim_kick);
	cancel_work_sync(&kjit_reclaim_work);
	kjit_direct_exit();
	kjit_att_exit();
}
