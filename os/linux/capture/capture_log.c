// SPDX-License-Identifier: GPL-2.0
/* The capture's recorder: the state of the capture (its targets, the task
 * whose invocation is recorded) and the routines that translated code calls
 * for the events of an invocation (capture.c inserts the calls and says
 * what each records).  The register records that open an invocation and
 * follow a skipped call are capture_regs.c's; the buffers capture_buf.c's.
 * Record layouts: include/uapi/kjit/capture_format.h.
 *
 * One invocation is recorded at a time, by the task that owns it: the
 * routines return at once for every other task.  An owner that leaves the
 * cache (a call into code that is not translated) never reaches its END;
 * its next entry, or STOP, closes it as LEFT_CACHE; one that dies in it
 * (exit_group) is closed so by the next task that enters a target once it
 * can run no more (cap_reap_dead_owner).  The targets are one function, or
 * (KJIT_CAPTURE_EACH_ATTACHED) every function attached at arm time, each
 * recorded until it has one complete invocation.  Entries of a target, and
 * those refused while another task's invocation was open (with what it
 * was), are counted per target and written as TARGET records at STOP.  The
 * event buffer is bounded: when a record does not fit, END(overflow) is
 * written in the space kept for it and the capture is done. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/percpu.h>
#include "capture_log.h"
#include "capture_buf.h"
#include "builtin_tools.h"
#include "kjit/plugin.h"

/* A larger read ends the invocation: as OVERFLOW (the capture is done)
 * when one function is captured, as READ_TOO_LARGE with EACH_ATTACHED.  The
 * file format's limit; a fork's copy of the task_struct is ~10 KiB. */
#define CAP_MAX_READ KJIT_CAPF_READ_MAX

/* The targets' entry block pcs (fentry site + MCOUNT_INSN_SIZE), sorted;
 * read-only while armed, freed only after the plugin is removed.  With
 * EACH_ATTACHED each has a state byte (CAP_T_*), written by the owner at
 * its END only (one writer), read by every task that enters a target. */
static u64 *cap_tpc;
static u8 *cap_tstate;
static u32 cap_ntargets, cap_ndone;
/* Per target, by every task that enters it (kjit_caplog_claim). */
struct cap_target_count {
	atomic_t entries, busy;
	int holder;               /* target index of the open invocation, -1 */
	u32 holder_pid;
};
static struct cap_target_count *cap_tcount;
static bool cap_targets_written;  /* a second STOP writes none */
#define CAP_T_DONE 0x80u           /* a complete invocation, or enough attempts */
#define CAP_T_ATTEMPTS 0x7fu       /* invocations that were not complete */
/* A call that never returns in the cache (exit_group, a sleep the cache
 * does not follow) would otherwise be recorded at every entry and fill the
 * buffer. */
#define CAP_MAX_ATTEMPTS 4
/* How far up the parents KJIT_CAPTURE_DESCENDANTS looks. */
#define CAP_MAX_GENERATIONS 16
static u32 cap_mode;            /* KJIT_CAPTURE_* */
static u32 cap_pid, cap_count;
static atomic_t cap_done_n;
static int cap_state;           /* KJIT_CAP_STATE_* */
static struct task_struct *cap_owner;
/* The owner's task, referenced from its claim to its END: a dead owner's
 * struct stays readable until its invocation is closed. */
static struct task_struct *cap_owner_ref;
static atomic_t cap_reaping;    /* one task at a time checks a stale owner */
static int cap_cur = -1;        /* target index of the open invocation */
static u32 cap_owner_pid;       /* the owner's pid, read by the tasks it refuses */
static u64 cap_entry_sp;        /* rsp at the entry (points at the return address) */
static bool cap_slept;          /* the open invocation called the scheduler */
static u32 cap_resumes;         /* RESUME records of the open invocation */

/* The owner's call the replay skips, from the call (kjit_cap_sleep,
 * kjit_cap_native_call) to its RESUME record at the return address (one
 * invocation is recorded at a time, by its owner only). */
struct cap_skip_state {
	struct kjit_caplog_skipped_call call;
	bool pending;
};
static struct cap_skip_state cap_skipping;

static void cap_end(u32 reason);
static void cap_log_read(u64 pc, u64 addr, u64 ea, u32 size, u32 flags);
static u64 cap_seg_base(u64 seg);

/* The owner's plain load whose value is not logged yet: its call after the
 * load logs it.  A load that faults by design continues at its fixup, not
 * after it; the next event of the owner logs it first, so the order of the
 * log is the order of execution. */
struct cap_pending_read {
	u64 pc, ea, size, seg;
	bool set;
};
static struct cap_pending_read cap_pending;

static void cap_flush_pending(void)
{
	struct cap_pending_read r = cap_pending;

	if (!r.set)
		return;
	cap_pending.set = false;
	cap_log_read(r.pc, r.ea + cap_seg_base(r.seg), r.ea, r.size, r.seg);
}

void *kjit_caplog_reserve(u32 len, u32 type)
{
	void *r = kjit_capbuf_reserve_event(len, type, false);

	if (!r)
		cap_end(KJIT_CAP_END_OVERFLOW);
	return r;
}

/* Whether the open invocation, ending for `reason`, can be replayed whole
 * (what kjitctl capture --first-complete keeps). */
static bool cap_complete(u32 reason)
{
	return reason == KJIT_CAP_END_RETURNED ||
	       (reason == KJIT_CAP_END_SLEPT && cap_resumes && !cap_skipping.pending);
}

/* EACH_ATTACHED: the end of an invocation of target cap_cur.  True when
 * every target is done. */
static bool cap_target_ended(u32 reason)
{
	u8 st;

	if (cap_cur < 0 || (u32)cap_cur >= cap_ntargets)
		return false;
	st = cap_tstate[cap_cur];
	if (st & CAP_T_DONE)
		return false;
	if (cap_complete(reason) || (st & CAP_T_ATTEMPTS) + 1 >= CAP_MAX_ATTEMPTS) {
		WRITE_ONCE(cap_tstate[cap_cur], st | CAP_T_DONE);
		return ++cap_ndone >= cap_ntargets;
	}
	WRITE_ONCE(cap_tstate[cap_cur], st + 1);
	return false;
}

/* Ends the owner's open invocation (called by the owner, or for a dead
 * owner by the one task that closes it, or by STOP). */
static void cap_end(u32 reason)
{
	struct kjit_cap_end *e;
	struct task_struct *ref = cap_owner_ref;
	bool done;

	cap_pending.set = false;   /* flushed by cap_ret; else the invocation is cut short */

	e = kjit_capbuf_reserve_event(sizeof(*e), KJIT_CAP_END, true);
	if (e) {
		e->reason = reason;
		e->pad = 0;
		e->icount = kjit_tool_icount();
		kjit_capbuf_commit_event(e);
	}
	if (reason == KJIT_CAP_END_OVERFLOW) {
		kjit_capbuf_set_flag(KJIT_CAP_F_OVERFLOW);
		WRITE_ONCE(cap_state, KJIT_CAP_STATE_DONE);
	}
	done = atomic_inc_return(&cap_done_n) >= cap_count;
	if (cap_mode & KJIT_CAPTURE_EACH_ATTACHED)
		done = cap_target_ended(reason);
	if (done)
		WRITE_ONCE(cap_state, KJIT_CAP_STATE_DONE);
	WRITE_ONCE(cap_cur, -1);
	cap_owner_ref = NULL;
	smp_wmb();
	WRITE_ONCE(cap_owner, NULL);
	if (ref)
		put_task_struct(ref);
}

static inline bool is_owner(void)
{
	return READ_ONCE(cap_owner) == current && READ_ONCE(cap_state) == KJIT_CAP_STATE_ARMED;
}

/* ---- routines called from translated code ----------------------------- */

/* Whether current is in the captured thread group or, with DESCENDANTS,
 * its parent or an ancestor up to CAP_MAX_GENERATIONS up is. */
static bool cap_pid_matches(void)
{
	struct task_struct *t;
	bool match = false;
	int depth;

	if (!cap_pid || task_tgid_nr(current) == cap_pid)
		return true;
	if (!(cap_mode & KJIT_CAPTURE_DESCENDANTS))
		return false;
	rcu_read_lock();
	t = current;
	for (depth = 0; depth < CAP_MAX_GENERATIONS && !match; depth++) {
		t = rcu_dereference(t->real_parent);
		if (!t || !t->pid)
			break;             /* past init: the idle task */
		match = task_tgid_nr(t) == cap_pid;
	}
	rcu_read_unlock();
	return match;
}

/* An owner that died inside its invocation (exit_group and exit never
 * return) holds the capture until someone closes it.  Once it is TASK_DEAD
 * and off its CPU it runs no instruction again, so closing it from here
 * races with no routine of its own.  The reference taken at its claim
 * keeps its task_struct; one that ended meanwhile is freed only after an
 * RCU grace period, hence the read-side section.  One task at a time. */
static void cap_reap_dead_owner(void)
{
	struct task_struct *o;
	bool dead;

	if (!READ_ONCE(cap_owner) || atomic_cmpxchg(&cap_reaping, 0, 1))
		return;
	rcu_read_lock();
	o = READ_ONCE(cap_owner);
	dead = o && o != current && READ_ONCE(o->__state) == TASK_DEAD &&
	       !smp_load_acquire(&o->on_cpu);
	rcu_read_unlock();
	if (dead && cmpxchg(&cap_owner, o, current) == o)
		cap_end(KJIT_CAP_END_LEFT_CACHE);
	atomic_set_release(&cap_reaping, 0);
}

static int cap_target_index(u64 pc)
{
	u32 lo = 0, hi = cap_ntargets;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (cap_tpc[mid] == pc)
			return mid;
		if (cap_tpc[mid] < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static bool cap_target_done(int t)
{
	return (cap_mode & KJIT_CAPTURE_EACH_ATTACHED) && (READ_ONCE(cap_tstate[t]) & CAP_T_DONE);
}

bool kjit_caplog_claim(u64 pc, u64 rsp)
{
	int t;

	if (READ_ONCE(cap_state) != KJIT_CAP_STATE_ARMED || !in_task() || !cap_pid_matches())
		return false;
	if (READ_ONCE(cap_owner) == current) {
		/* The previous invocation never returned through the cache. */
		cap_end(KJIT_CAP_END_LEFT_CACHE);
		if (READ_ONCE(cap_state) != KJIT_CAP_STATE_ARMED)
			return false;
	} else {
		cap_reap_dead_owner();
	}
	t = cap_target_index(pc);
	if (t < 0 || cap_target_done(t))
		return false;
	atomic_inc(&cap_tcount[t].entries);
	if (cmpxchg(&cap_owner, NULL, current) != NULL) {
		/* another task's invocation is being recorded */
		atomic_inc(&cap_tcount[t].busy);
		WRITE_ONCE(cap_tcount[t].holder, READ_ONCE(cap_cur));
		WRITE_ONCE(cap_tcount[t].holder_pid, READ_ONCE(cap_owner_pid));
		return false;
	}
	get_task_struct(current);
	cap_owner_ref = current;
	WRITE_ONCE(cap_owner_pid, task_pid_nr(current));
	if (cap_target_done(t) || READ_ONCE(cap_state) != KJIT_CAP_STATE_ARMED) {
		/* its last attempt ended between the check and the claim */
		cap_owner_ref = NULL;
		WRITE_ONCE(cap_owner, NULL);
		put_task_struct(current);
		return false;
	}
	WRITE_ONCE(cap_cur, t);
	cap_entry_sp = rsp;
	cap_slept = false;
	cap_resumes = 0;
	cap_skipping.pending = false;
	return true;
}

void kjit_cap_block(u64 pc, u64 ninsns, u64 flags)
{
	struct kjit_cap_block *r;

	if (!is_owner())
		return;
	cap_flush_pending();
	r = kjit_caplog_reserve(sizeof(*r), KJIT_CAP_BLOCK);
	if (!r)
		return;
	r->pc = pc;
	r->ninsns = ninsns;
	r->flags = flags;
	kjit_capbuf_commit_event(r);
}

/* `value`: what the instruction read, when known (kjit_cap_read_after), else
 * NULL: read now from memory. */
static void cap_log_read_value(u64 pc, u64 addr, u64 ea, u32 size, u32 flags, const void *value)
{
	struct kjit_cap_read *r;
	u8 *val;
	long err;

	if (size > CAP_MAX_READ) {
		cap_end((cap_mode & KJIT_CAPTURE_EACH_ATTACHED) ? KJIT_CAP_END_READ_TOO_LARGE
							       : KJIT_CAP_END_OVERFLOW);
		return;
	}
	r = kjit_caplog_reserve(sizeof(*r) + size, KJIT_CAP_READ);
	if (!r)
		return;
	r->pc = pc;
	r->addr = addr;
	r->ea = ea;
	r->size = size;
	val = (u8 *)(r + 1);
	if (addr < TASK_SIZE_MAX)
		flags |= KJIT_CAP_RD_USER;
	if (value)
		err = 0, memcpy(val, value, size);
	else if (addr < TASK_SIZE_MAX)
		err = copy_from_user_nofault(val, (const void __user *)(unsigned long)addr, size);
	else
		err = copy_from_kernel_nofault(val, (const void *)(unsigned long)addr, size);
	if (err) {
		memset(val, 0, size);
		flags |= KJIT_CAP_RD_FAILED;
	}
	r->flags = flags;
	kjit_capbuf_commit_event(r);
}

static void cap_log_read(u64 pc, u64 addr, u64 ea, u32 size, u32 flags)
{
	cap_log_read_value(pc, addr, ea, size, flags, NULL);
}

static u64 cap_seg_base(u64 seg)
{
	if (seg == KJIT_SEG_GS)
		return raw_cpu_read(this_cpu_off);
	if (seg == KJIT_SEG_FS)
		return current->thread.fsbase;
	return 0;
}

void kjit_cap_read(u64 pc, u64 ea, u64 size, u64 seg)
{
	if (!is_owner())
		return;
	cap_flush_pending();
	cap_log_read(pc, ea + cap_seg_base(seg), ea, size, seg);
}

/* A plain load is logged after it ran (see cap_instrument_read): the call before
 * it only notes the address, which the load may overwrite (mov (%rax),%rax). */
void kjit_cap_load_before(u64 pc, u64 ea, u64 size, u64 seg)
{
	if (!is_owner())
		return;
	cap_flush_pending();
	cap_pending = (struct cap_pending_read){ .pc = pc, .ea = ea, .size = size, .seg = seg, .set = true };
}

void kjit_cap_load_after(void)
{
	if (is_owner())
		cap_flush_pending();
}

/* The effective address of the word a bt* with register bit offset `bit`
 * accesses: the offset is signed and selects a word beyond EA. */
static u64 cap_bit_ea(u64 ea, u64 size, u64 bit)
{
	switch (size) {
	case 2: return ea + (u64)(((s64)(s16)bit >> 4) * 2);
	case 4: return ea + (u64)(((s64)(s32)bit >> 5) * 4);
	default: return ea + (u64)(((s64)bit >> 6) * 8);
	}
}

void kjit_cap_bit_load_before(u64 pc, u64 ea, u64 size, u64 seg, u64 bit)
{
	kjit_cap_load_before(pc, cap_bit_ea(ea, size, bit), size, seg);
}

void kjit_cap_bit_read(u64 pc, u64 ea, u64 size, u64 seg, u64 bit)
{
	kjit_cap_read(pc, cap_bit_ea(ea, size, bit), size, seg);
}

/* After a load into a register, cmpxchg, xadd or xchg: `value` holds what
 * it read (little endian, its low `size` bytes) from the address noted by
 * kjit_cap_load_before. */
void kjit_cap_read_after(u64 value)
{
	struct cap_pending_read r = cap_pending;

	if (!is_owner() || !r.set)
		return;
	cap_pending.set = false;
	cap_log_read_value(r.pc, r.ea + cap_seg_base(r.seg), r.ea, r.size, r.seg, &value);
}

void kjit_cap_string(u64 pc, u64 rsi, u64 rdi, u64 rcx, u64 flags, u64 kind)
{
	u64 width = kind & 0xff, n = width, start;
	int pass;

	if (!is_owner())
		return;
	cap_flush_pending();
	if (kind & CAP_STR_REP)
		n = rcx * width;
	if (n == 0)
		return;
	for (pass = 0; pass < 2; pass++) {
		u64 src;

		if (pass == 0 && (kind & CAP_STR_RDI_ONLY))
			continue;
		if (pass == 1 && !(kind & (CAP_STR_TWO_SOURCES | CAP_STR_RDI_ONLY)))
			break;                 /* movs/lods read only rsi */
		src = pass == 0 ? rsi : rdi;
		start = (flags & X86_EFLAGS_DF) ? src + width - n : src;
		cap_log_read(pc, start, start, n, KJIT_CAP_RD_STRING);
		if (!is_owner())
			return;
	}
}

/* After a non-deterministic instruction: its results.  kjit_insert_call
 * takes at most 6 arguments, so dest_reg and len stay 0 (the registers are
 * enough for a replay). */
void kjit_cap_nondet(u64 pc, u64 dest, u64 rcx, u64 rdx, u64 rbx, u64 flags)
{
	struct kjit_cap_nondet *r;

	if (!is_owner())
		return;
	cap_flush_pending();
	r = kjit_caplog_reserve(sizeof(*r), KJIT_CAP_NONDET);
	if (!r)
		return;
	r->pc = pc;
	r->dest = dest;
	r->rcx = rcx;
	r->rdx = rdx;
	r->rbx = rbx;
	r->rflags = flags;
	r->dest_reg = 0;
	r->len = 0;
	kjit_capbuf_commit_event(r);
}

/* The owner calls `target` at `pc`, outside the code cache, and continues
 * in it at `ret`, where its RESUME event is recorded. */
static void cap_skip_call(u64 pc, u64 target, u64 ret)
{
	cap_flush_pending();
	cap_skipping = (struct cap_skip_state){
		.call = { .pc = pc, .target = target, .ret = ret },
		.pending = true,
	};
}

/* A call into the scheduler funnel: the cache follows the task through the
 * sleep (sched_resume.c). */
void kjit_cap_sleep(u64 pc, u64 target, u64 ret)
{
	if (!is_owner())
		return;
	cap_slept = true;
	cap_skip_call(pc, target, ret);
}

/* A call the cache makes natively (shim.c's native calls). */
void kjit_cap_native_call(u64 pc, u64 target, u64 ret)
{
	if (is_owner())
		cap_skip_call(pc, target, ret);
}

bool kjit_caplog_take_resume(u64 pc, struct kjit_caplog_skipped_call *call)
{
	if (!is_owner() || !cap_skipping.pending || pc != cap_skipping.call.ret)
		return false;
	cap_skipping.pending = false;
	*call = cap_skipping.call;
	cap_flush_pending();
	cap_resumes++;
	return true;
}

void kjit_cap_ret(u64 pc, u64 rsp)
{
	if (!is_owner())
		return;
	cap_flush_pending();
	if (rsp != cap_entry_sp)
		return;
	cap_end(cap_slept ? KJIT_CAP_END_SLEPT : KJIT_CAP_END_RETURNED);
}

/* Whether `pc` is a target's entry block (any context: no lock). */
bool kjit_caplog_is_target(u64 pc)
{
	return cap_tpc && cap_target_index(pc) >= 0;
}

void kjit_caplog_free(void)
{
	kjit_capbuf_free();
	kvfree(cap_tpc);
	kvfree(cap_tstate);
	kvfree(cap_tcount);
	cap_tpc = NULL;
	cap_tstate = NULL;
	cap_tcount = NULL;
	cap_ntargets = 0;
}

/* Fresh buffers for a capture of the invocations at `targets` (n sorted,
 * distinct entry block pcs, kvmalloc'd: the recorder owns them from here,
 * even on failure); the state stays as it is until kjit_caplog_set_state. */
int kjit_caplog_prepare(u64 *targets, u32 n, u32 mode, u32 pid, u32 count, u32 ev_kb, u32 code_kb)
{
	u32 i;

	kjit_caplog_free();
	cap_tpc = targets;
	cap_ntargets = n;
	cap_tstate = kvzalloc(n, GFP_KERNEL);
	cap_tcount = kvcalloc(n, sizeof(*cap_tcount), GFP_KERNEL);
	if (kjit_capbuf_alloc(ev_kb, code_kb) || !cap_tstate || !cap_tcount || !n) {
		kjit_caplog_free();
		return -ENOMEM;
	}
	cap_mode = mode;
	cap_pid = pid;
	cap_count = count;
	cap_ndone = 0;
	cap_cur = -1;
	atomic_set(&cap_done_n, 0);
	for (i = 0; i < n; i++)
		cap_tcount[i].holder = -1;
	cap_owner = NULL;
	cap_owner_ref = NULL;
	cap_owner_pid = 0;
	cap_targets_written = false;
	return 0;
}

void kjit_caplog_set_state(int state)
{
	WRITE_ONCE(cap_state, state);
}

/* A TARGET record for every target, as far as the event buffer holds them
 * (after the last routine call). */
static void cap_write_targets(void)
{
	struct kjit_cap_target *r;
	u32 i;

	if (cap_state == KJIT_CAP_STATE_IDLE || !cap_tcount || cap_targets_written)
		return;
	cap_targets_written = true;
	for (i = 0; i < cap_ntargets; i++) {
		const struct cap_target_count *c = &cap_tcount[i];

		r = kjit_capbuf_reserve_event(sizeof(*r), KJIT_CAP_TARGET, true);
		if (!r)
			return;
		r->entry_pc = cap_tpc[i];
		r->entries = atomic_read(&c->entries);
		r->busy = atomic_read(&c->busy);
		r->holder_pc = c->holder >= 0 && (u32)c->holder < cap_ntargets ? cap_tpc[c->holder] : 0;
		r->holder_pid = c->holder_pid;
		r->pad = 0;
		kjit_capbuf_commit_event(r);
	}
}

/* After the last routine call can have run: an open invocation ends as
 * STOPPED, the TARGET records follow, and an armed capture is done. */
void kjit_caplog_stopped(void)
{
	if (READ_ONCE(cap_owner))
		cap_end(KJIT_CAP_END_STOPPED);
	cap_write_targets();
	WRITE_ONCE(cap_state, cap_state == KJIT_CAP_STATE_IDLE ? KJIT_CAP_STATE_IDLE
							     : KJIT_CAP_STATE_DONE);
}

int kjit_caplog_read_out(struct kjit_ioc_capture_read *r, void __user *uarg)
{
	kjit_capbuf_snapshot(r);
	r->state = READ_ONCE(cap_state);
	r->ncaptured = atomic_read(&cap_done_n);
	if (kjit_capbuf_copy_out(r))
		return -EFAULT;
	if (copy_to_user(uarg, r, sizeof(*r)))
		return -EFAULT;
	return 0;
}
