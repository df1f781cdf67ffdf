// SPDX-License-Identifier: GPL-2.0
/* KCOV on kernels built without it: the ABI of kernel/kcov.c
 * (Documentation/dev-tools/kcov.rst, include/uapi/linux/kcov.h) served from
 * kjit's code cache, so unmodified coverage-guided fuzzers run on a stock
 * distribution kernel.
 *
 * The device, /sys/kernel/debug/kcov, has the real one's semantics and
 * error codes, step by step (the real function each mirrors is named):
 * open, KCOV_INIT_TRACE (size in words, the buffer allocated here), mmap of
 * exactly that size, KCOV_ENABLE for the calling thread with KCOV_TRACE_PC
 * or KCOV_TRACE_CMP, KCOV_DISABLE, close; a descriptor outlives its file
 * while a thread has it enabled, and a thread's exit disables it.
 *
 * The real KCOV keeps the enabled descriptor in task_struct.  Here a hash
 * table from task to descriptor, read under RCU, holds it for the device's
 * bookkeeping, and each CPU holds what translated code and the entry path
 * need to know about the task running on it (struct kjit_kcov_cpu): its
 * buffer, its mode, whether it has coverage at all.  A task with coverage
 * carries a preempt notifier (the kernel's per-task switch hooks, as KVM's
 * vCPU threads do): switched in, it loads its state into the CPU's;
 * switched out, it clears it.  Tasks without coverage have no notifier and
 * pay nothing at a switch but the scheduler's check of an empty list.  A
 * task preempted in translated code resumes there (maybe on another CPU)
 * only through a switch in, so the CPU's state is always its own when its
 * blocks run.
 *  - the entry filter (entry_trampoline.S in assembly, builtin_tools.h in
 *    C) reads the tool's bit of one per-CPU byte (entry_table.h): a task
 *    without coverage runs natively at the cost of a test;
 *  - trace-PC is inlined into every block (kcov_trace_pc_inline): load the
 *    CPU's buffer, bump the count, store the PC, as the compiler's
 *    __sanitizer_cov_trace_pc does, with no call;
 *  - comparison hooks are called only when the CPU's cmp byte is set
 *    (kjit_insert_call_if): a trace-PC task pays a compare per comparison.
 *
 * Trace-PC records the original address of each block's first instruction
 * (the real KCOV records a return address inside each basic block, after
 * the compiler's own block split); the count is cover[0], written before
 * the PC, and records stop silently when the buffer is full.  Only task
 * context appends, as check_kcov_mode() requires: interrupts never run
 * translated code (the entry filter admits task context only).
 *
 * KCOV_REMOTE_ENABLE checks its argument as the real one does, then
 * answers -ENOTSUPP: remote coverage needs the kcov_remote_start() hooks
 * that a kernel without CONFIG_KCOV compiles to nothing. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/hashtable.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <uapi/linux/kcov.h>
#include "kcov.h"
#include "shim.h"
#include "kcov_cmp.h"
#include "compat.h"
#include "symbols.h"
#include "kjit/plugin.h"

enum kcov_mode { KCOV_DISABLED, KCOV_INIT, KCOV_PC, KCOV_CMP };

struct kjit_kcov {
	refcount_t refcount;
	spinlock_t lock;
	enum kcov_mode mode;
	unsigned int size;           /* words */
	u64 *area;
	struct task_struct *t;       /* the thread it is enabled for */
	struct rcu_head rcu;
};

struct kcov_task {
	struct hlist_node node;
	struct task_struct *task;
	struct kjit_kcov *kcov;
	struct preempt_notifier switches;   /* registered on task while enabled */
	struct rcu_head rcu;
};

static DEFINE_HASHTABLE(kcov_tasks, 8);
static DEFINE_SPINLOCK(kcov_tasks_lock);
static atomic_t kcov_ntasks;

/* The task running on this CPU, as translated code reads it. */
struct kjit_kcov_cpu {
	u64 *pc_area;   /* its buffer when it is in KCOV_TRACE_PC mode, else NULL */
	u64 pc_size;    /* the buffer's size in words (either mode) */
	u64 *cmp_area;  /* its buffer when it is in KCOV_TRACE_CMP mode, else NULL */
	u8 cmp;         /* it is in KCOV_TRACE_CMP mode */
};
static DEFINE_PER_CPU(struct kjit_kcov_cpu, kcov_cpu);
/* The exit probe and the preempt notifiers' key (kjit_kcov_init): without
 * them a task's state would outlive it, and the device is not created. */
static bool kcov_available;

static struct kjit_kcov *task_kcov(struct task_struct *t)
{
	struct kcov_task *e;

	hash_for_each_possible_rcu(kcov_tasks, e, node, (unsigned long)t)
		if (e->task == t)
			return e->kcov;
	return NULL;
}

static bool kjit_kcov_task_enabled(struct task_struct *t)
{
	bool on;

	if (!atomic_read(&kcov_ntasks))
		return false;
	rcu_read_lock();
	on = task_kcov(t) != NULL;
	rcu_read_unlock();
	return on;
}

/* This CPU's state for a task with descriptor k (NULL: without coverage)
 * that runs here now or next; preemption off. */
static void kcov_cpu_load(struct kjit_kcov *k)
{
	struct kjit_kcov_cpu *c = this_cpu_ptr(&kcov_cpu);
	enum kcov_mode mode = k ? READ_ONCE(k->mode) : KCOV_DISABLED;

	WRITE_ONCE(c->pc_size, k ? k->size : 0);
	WRITE_ONCE(c->pc_area, mode == KCOV_PC ? k->area : NULL);
	WRITE_ONCE(c->cmp_area, mode == KCOV_CMP ? k->area : NULL);
	WRITE_ONCE(c->cmp, mode == KCOV_CMP);
	/* only the tool's bit: the policy's is task_filter.c's */
	if (k)
		this_cpu_or(kjit_entry_task_admitted, KJIT_ENTRY_ADMIT_TOOL);
	else
		this_cpu_and(kjit_entry_task_admitted, (u8)~KJIT_ENTRY_ADMIT_TOOL);
}

/* The task's notifier: its state follows it onto each CPU it runs on. */
static void kcov_sched_in(struct preempt_notifier *pn, int cpu)
{
	kcov_cpu_load(container_of(pn, struct kcov_task, switches)->kcov);
}

static void kcov_sched_out(struct preempt_notifier *pn, struct task_struct *next)
{
	kcov_cpu_load(NULL);       /* next's own notifier, if any, loads it */
}

static struct preempt_ops kcov_switch_ops = {
	.sched_in = kcov_sched_in,
	.sched_out = kcov_sched_out,
};

u64 kjit_kcov_enabled_tasks(void)
{
	return atomic_read(&kcov_ntasks);
}

static void kcov_free_rcu(struct rcu_head *h)
{
	struct kjit_kcov *k = container_of(h, struct kjit_kcov, rcu);

	vfree(k->area);
	kfree(k);
}

/* kcov_put: readers find a descriptor only through the task table, under
 * RCU, so it is freed a grace period after its last reference. */
static void kcov_put(struct kjit_kcov *k)
{
	if (refcount_dec_and_test(&k->refcount))
		call_rcu(&k->rcu, kcov_free_rcu);
}

/* kcov_disable + kcov_reset: the thread's entry goes, the descriptor is
 * back in INIT mode for another thread.  Caller holds k->lock. */
static void kcov_unbind(struct kjit_kcov *k)
{
	struct kcov_task *e;
	struct hlist_node *tmp;
	unsigned long flags;

	/* Only the task itself unbinds (DISABLE, its exit): its notifier list
	 * is its own, changed with preemption off as the scheduler reads it. */
	WARN_ON_ONCE(k->t != current);
	preempt_disable();
	spin_lock_irqsave(&kcov_tasks_lock, flags);
	hash_for_each_possible_safe(kcov_tasks, e, tmp, node, (unsigned long)k->t)
		if (e->task == k->t && e->kcov == k) {
			hash_del_rcu(&e->node);
			preempt_notifier_unregister(&e->switches);
			atomic_dec(&kcov_ntasks);
			kfree_rcu(e, rcu);
		}
	spin_unlock_irqrestore(&kcov_tasks_lock, flags);
	kcov_cpu_load(NULL);
	preempt_enable();
	module_put(THIS_MODULE);          /* ENABLE's */
	k->t = NULL;
	k->mode = KCOV_INIT;
}

/* ---- the file ---------------------------------------------------------- */

static int kcov_open(struct inode *inode, struct file *f)
{
	struct kjit_kcov *k = kzalloc(sizeof(*k), GFP_KERNEL);

	if (!k)
		return -ENOMEM;
	k->mode = KCOV_DISABLED;
	refcount_set(&k->refcount, 1);
	spin_lock_init(&k->lock);
	f->private_data = k;
	return nonseekable_open(inode, f);
}

static int kcov_close(struct inode *inode, struct file *f)
{
	kcov_put(f->private_data);
	return 0;
}

static int kcov_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct kjit_kcov *k = f->private_data;
	unsigned long size, off, flags;
	int res;

	spin_lock_irqsave(&k->lock, flags);
	size = (unsigned long)k->size * sizeof(u64);
	if (!k->area || vma->vm_pgoff != 0 || vma->vm_end - vma->vm_start != size) {
		spin_unlock_irqrestore(&k->lock, flags);
		return -EINVAL;
	}
	spin_unlock_irqrestore(&k->lock, flags);
	kjit_vm_flags_set(vma, VM_DONTEXPAND);
	for (off = 0; off < size; off += PAGE_SIZE) {
		res = vm_insert_page(vma, vma->vm_start + off, vmalloc_to_page((char *)k->area + off));
		if (res)
			return res;
	}
	return 0;
}

static int kcov_mode_of(unsigned long arg)
{
	if (arg == KCOV_TRACE_PC)
		return KCOV_PC;
	if (arg == KCOV_TRACE_CMP)
		return KCOV_CMP;
	return -EINVAL;
}

/* kcov_ioctl_locked, for ENABLE and DISABLE; `e` is a table entry
 * allocated beforehand (no allocation under the lock). */
static long kcov_enable_disable(struct kjit_kcov *k, unsigned int cmd, unsigned long arg,
				struct kcov_task **e)
{
	struct task_struct *t = current;
	unsigned long flags;
	int mode;

	if (cmd == KCOV_ENABLE) {
		if (k->mode != KCOV_INIT || !k->area)
			return -EINVAL;
		rcu_read_lock();
		mode = task_kcov(t) != NULL;
		rcu_read_unlock();
		if (k->t || mode)
			return -EBUSY;
		mode = kcov_mode_of(arg);
		if (mode < 0)
			return mode;
		k->mode = mode;
		k->t = t;
		(*e)->task = t;
		(*e)->kcov = k;
		refcount_inc(&k->refcount);   /* put by DISABLE or the thread's exit */
		spin_lock_irqsave(&kcov_tasks_lock, flags);
		hash_add_rcu(kcov_tasks, &(*e)->node, (unsigned long)t);
		atomic_inc(&kcov_ntasks);
		spin_unlock_irqrestore(&kcov_tasks_lock, flags);
		/* t is current: from here its switches carry its state.  The
		 * notifier calls this module at every switch of t: the module
		 * stays until t's unbind, even after the file is closed. */
		__module_get(THIS_MODULE);
		preempt_notifier_init(&(*e)->switches, &kcov_switch_ops);
		preempt_disable();
		preempt_notifier_register(&(*e)->switches);
		kcov_cpu_load(k);
		preempt_enable();
		*e = NULL;
		return 0;
	}
	/* KCOV_DISABLE */
	rcu_read_lock();
	mode = task_kcov(t) != k;
	rcu_read_unlock();
	if (arg != 0 || mode)
		return -EINVAL;
	if (WARN_ON(k->t != t))
		return -EINVAL;
	kcov_unbind(k);
	/* The enable's reference; the file still holds one. */
	refcount_dec(&k->refcount);
	return 0;
}

/* KCOV_REMOTE_ENABLE: kcov_ioctl's copy and checks of the argument, then
 * kcov_ioctl_locked's, then no remote coverage. */
static long kcov_remote_enable(struct kjit_kcov *k, unsigned long arg)
{
	struct kcov_remote_arg __user *u = (void __user *)arg;
	struct kcov_remote_arg *ra;
	unsigned int n;
	unsigned long flags;
	long ret;

	if (get_user(n, &u->num_handles))
		return -EFAULT;
	if (n > KCOV_REMOTE_MAX_HANDLES)
		return -EINVAL;
	ra = memdup_user(u, struct_size(ra, handles, n));
	if (IS_ERR(ra))
		return PTR_ERR(ra);
	ret = -EINVAL;
	if (ra->num_handles != n)
		goto out;
	spin_lock_irqsave(&k->lock, flags);
	if (k->mode != KCOV_INIT || !k->area)
		ret = -EINVAL;
	else if (k->t || kjit_kcov_task_enabled(current))
		ret = -EBUSY;
	else if (kcov_mode_of(ra->trace_mode) < 0)
		ret = -EINVAL;
	else if (ra->area_size > LONG_MAX / sizeof(unsigned long))
		ret = -EINVAL;
	else
		ret = -ENOTSUPP;
	spin_unlock_irqrestore(&k->lock, flags);
out:
	kfree(ra);
	return ret;
}

static int kcov_exit_probe_on(void);

static long kcov_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct kjit_kcov *k = f->private_data;
	struct kcov_task *e = NULL;
	unsigned long flags;
	u64 *area;
	long ret;

	switch (cmd) {
	case KCOV_INIT_TRACE:
		if (arg < 2 || arg > INT_MAX / sizeof(unsigned long))
			return -EINVAL;
		area = vmalloc_user(arg * sizeof(u64));
		if (!area)
			return -ENOMEM;
		spin_lock_irqsave(&k->lock, flags);
		if (k->mode != KCOV_DISABLED) {
			spin_unlock_irqrestore(&k->lock, flags);
			vfree(area);
			return -EBUSY;
		}
		k->area = area;
		k->size = arg;
		k->mode = KCOV_INIT;
		spin_unlock_irqrestore(&k->lock, flags);
		return 0;
	case KCOV_REMOTE_ENABLE:
		return kcov_remote_enable(k, arg);
	case KCOV_ENABLE:
		ret = kcov_exit_probe_on();
		if (ret)
			return ret;
		e = kzalloc(sizeof(*e), GFP_KERNEL);
		if (!e)
			return -ENOMEM;
		fallthrough;
	case KCOV_DISABLE:
		spin_lock_irqsave(&k->lock, flags);
		ret = kcov_enable_disable(k, cmd, arg, &e);
		spin_unlock_irqrestore(&k->lock, flags);
		kfree(e);
		return ret;
	default:
		return -ENOTTY;
	}
}

static const struct file_operations kcov_fops = {
	.owner = THIS_MODULE,
	.open = kcov_open,
	.unlocked_ioctl = kcov_ioctl,
	.compat_ioctl = kcov_ioctl,
	.mmap = kcov_mmap,
	.release = kcov_close,
};

static struct dentry *kcov_dentry;

bool kjit_kcov_is_device_op(unsigned long addr)
{
	return addr == (unsigned long)kcov_open || addr == (unsigned long)kcov_ioctl ||
	       addr == (unsigned long)kcov_mmap || addr == (unsigned long)kcov_close;
}

int kjit_kcov_device_create(void)
{
	struct dentry *d;

	if (kcov_dentry)
		return 0;
	if (!kcov_available)
		return -ENODEV;
	d = debugfs_lookup("kcov", NULL);
	if (d) {
		dput(d);
		return -EEXIST;           /* the kernel's own KCOV */
	}
	d = debugfs_create_file_unsafe("kcov", 0600, NULL, NULL, &kcov_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	kcov_dentry = d;
	pr_info("KCOV device /sys/kernel/debug/kcov (trace-pc: block starts, trace-cmp)\n");
	return 0;
}

void kjit_kcov_device_remove(void)
{
	debugfs_remove(kcov_dentry);
	kcov_dentry = NULL;
}

/* ---- a thread's exit: kcov_task_exit ------------------------------------ */

static struct tracepoint *tp_exit;

static void kcov_exit_probe(void *data, struct task_struct *p)
{
	struct kjit_kcov *k;
	unsigned long flags;

	if (!atomic_read(&kcov_ntasks))
		return;
	rcu_read_lock();
	k = task_kcov(p);
	if (k && !refcount_inc_not_zero(&k->refcount))
		k = NULL;
	rcu_read_unlock();
	if (!k)
		return;
	spin_lock_irqsave(&k->lock, flags);
	if (k->t == p) {
		kcov_unbind(k);
		refcount_dec(&k->refcount);   /* the enable's reference */
	}
	spin_unlock_irqrestore(&k->lock, flags);
	kcov_put(k);
}

/* The probe is registered at the first KCOV_ENABLE, not at load: every
 * exiting task calls it, from translated exit_group too, where kjit's own
 * code is a native call (kjit_shim_add_native_call: it returns, tracepoint
 * probes run with preemption off), except on PREEMPT_RT, where its
 * spinlock_t may sleep and a call that can sleep leaves the cache. */
static DEFINE_MUTEX(exit_probe_mutex);
static bool exit_probe_on;

static int kcov_exit_probe_on(void)
{
	int ret = 0;

	if (!tp_exit)
		return -ENODEV;
	mutex_lock(&exit_probe_mutex);
	if (!exit_probe_on) {
		ret = tracepoint_probe_register(tp_exit, kcov_exit_probe, NULL);
		exit_probe_on = !ret;
	}
	mutex_unlock(&exit_probe_mutex);
	return ret;
}

static void find_tps(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		tp_exit = tp;
}

int kjit_kcov_init(void)
{
	for_each_kernel_tracepoint(find_tps, NULL);
	if (!tp_exit) {
		pr_err("no sched_process_exit tracepoint: KCOV unavailable\n");
		return 0;
	}
#ifndef CONFIG_PREEMPT_RT
	kjit_shim_add_native_call((unsigned long)kcov_exit_probe);
#endif
	/* The scheduler calls preempt notifiers only while some user holds
	 * this key: kjit does from load to unload (an empty list per task,
	 * checked at each switch, is what it costs a task without coverage). */
	preempt_notifier_inc();
	kcov_available = true;
	return 0;
}

void kjit_kcov_exit(void)
{
	kjit_kcov_device_remove();
	if (exit_probe_on) {
		tracepoint_probe_unregister(tp_exit, kcov_exit_probe, NULL);
		tracepoint_synchronize_unregister();
		exit_probe_on = false;
	}
	if (kcov_available)
		preempt_notifier_dec();   /* every notifier went with its task's unbind */
	rcu_barrier();                    /* kcov_free_rcu and kfree_rcu callbacks */
}

/* ---- the tool ------------------------------------------------------------ */

/* kernel/kcov.c's canonicalize_ip: PCs without the KASLR offset (every PC,
 * module ones too, as the kernel does), so a fuzzer's corpus signal stays
 * valid across reboots. */
static u64 canonical_ip(u64 pc)
{
	return pc - kjit_kaslr_offset();
}

/* __sanitizer_cov_trace_pc with the block's address, inlined by the engine
 * into each block (c is this CPU's struct kjit_kcov_cpu, addressed
 * gs-relative): no call, no lookup.  Kept a leaf without a stack frame so
 * the engine's specialiser accepts it; if it ever could not, the engine
 * calls it with this CPU's copy instead, which is as correct. */
static void kcov_trace_pc_inline(struct kjit_kcov_cpu *c, u64 pc)
{
	u64 *area = READ_ONCE(c->pc_area);
	u64 pos;

	if (!area)
		return;
	pos = READ_ONCE(area[0]) + 1;
	if (likely(pos < READ_ONCE(c->pc_size))) {
		WRITE_ONCE(area[0], pos);
		barrier();
		area[pos] = pc;
	}
}

/* write_comp_data: one 4-word record (type, arg1, arg2, pc), called only
 * while this CPU's task is in TRACE_CMP mode (the hook's guard). */
static void kcov_trace_cmp(u64 type, u64 arg1, u64 arg2, u64 pc)
{
	const struct kjit_kcov_cpu *c;
	u64 *area, size, count, start;

	if (!in_task())
		return;
	/* the buffer and its size of one task: no switch between the loads */
	preempt_disable();
	c = this_cpu_ptr(&kcov_cpu);
	area = READ_ONCE(c->cmp_area);
	size = READ_ONCE(c->pc_size);
	preempt_enable();
	if (!area)
		return;
	count = READ_ONCE(area[0]);
	start = 1 + count * 4;
	/* count comes from user space: bounded before any arithmetic on it
	 * (1 + count * 4 wraps for large counts). */
	if (likely(count < (size - 1) / 4)) {
		WRITE_ONCE(area[0], count + 1);
		barrier();
		area[start] = type;
		area[start + 1] = arg1;
		area[start + 2] = arg2;
		area[start + 3] = canonical_ip(pc);
	}
}

static void kcov_instrument_block(struct kjit_block *b, void *arg)
{
	kjit_insert_call(kjit_block_insn(b, 0), KJIT_IPOINT_BEFORE, (void *)kcov_trace_pc_inline, 2,
			 KJIT_ARG_PERCPU(&kcov_cpu), KJIT_ARG_CONST(canonical_ip(kjit_block_pc(b))));
}

static void kcov_instrument_insn(struct kjit_insn *in, void *arg)
{
	kjit_kcov_cmp_instrument(in, KJIT_ARG_PERCPU(&kcov_cpu.cmp), (void *)kcov_trace_cmp);
}

static const struct kjit_plugin kcov_plugin = {
	.name = "kcov",
	.on_block = kcov_instrument_block,
	.on_insn = kcov_instrument_insn,
};

const struct kjit_plugin *kjit_kcov_plugin(void)
{
	return &kcov_plugin;
}
