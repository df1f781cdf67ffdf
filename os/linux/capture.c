// SPDX-License-Identifier: GPL-2.0
/* Capture: a kjit plugin that records invocations of one attached function
 * completely enough to re-execute them off-line (kjit-sim replay).
 *
 * While armed, every block the engine builds gets:
 *  - its live code bytes copied (after alternatives/static keys) into the
 *    code buffer, once per build;
 *  - at its first instruction a BLOCK event (pc, instructions);
 *  - at the entry block (the attached function + 5, after its fentry call)
 *    three calls that take every GPR and rflags: the BEGIN event, the GS
 *    base (the per-CPU offset) and a copy of the task's stack above rsp;
 *  - for every instruction with an explicit memory read, a READ event with
 *    the address (segment base added) and the value, read with the nofault
 *    accessors (user addresses through copy_from_user_nofault): right after
 *    a plain load, before any other instruction (cap_instrument_read);
 *  - before string instructions that read (movs, lods, cmps, scas), the
 *    whole source range (rsi, rcx, DF);
 *  - after rdtsc/rdtscp/rdrand/rdseed/rdpid/cpuid/rdmsr/rdpmc/in, their
 *    output registers and flags (NONDET); `out` is logged as NONDET too;
 *  - before every return, a check whether rsp is the entry's: the END of
 *    the invocation.
 * Implicit stack reads (pop, ret, leave) are served in replay by the stack
 * copy and the replayed pushes; everything else comes from the READ log.
 * Which instructions are string instructions, non-deterministic, or carry
 * a memory operand that is only an address (nop, prefetch) is the engine
 * decoder's answer (kjit_insn_string_op, kjit_insn_nondeterministic_reg,
 * kjit_insn_is_memory_hint).  Record layouts: uapi/kjit_capture.h.
 *
 * One invocation is recorded at a time, by the task that owns it: the
 * routines return at once for every other task.  An owner that leaves the
 * cache (a call into code that is not translated) never reaches its END;
 * its next entry, or STOP, closes it as LEFT_CACHE.  The event buffer is
 * bounded: when a record does not fit, END(overflow) is written in the
 * space kept for it and the capture is done.  Records become visible to
 * READ only when complete (`used` is published after the bytes). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/rcupdate_wait.h>
#include <linux/percpu.h>
#include <linux/ftrace.h>
#include "capture.h"
#include "config.h"
#include "engine_host.h"
#include "entry_ftrace.h"
#include "shim.h"
#include "symbols.h"
#include "kjit/plugin.h"

#define CAP_END_RESERVE 64
#define CAP_MAX_READ 4096        /* a larger string read marks the capture overflowed */

struct cap_buf {
	u8 *p;
	u64 cap;
	u64 used;                /* published length */
};

static DEFINE_MUTEX(cap_mutex);
static struct cap_buf ev, code;
static bool cap_registered;
static u64 cap_target;          /* entry block pc: function + MCOUNT_INSN_SIZE */
static u32 cap_pid, cap_count;
static atomic_t cap_done_n;
static u32 cap_flags;
static int cap_state;           /* KJIT_CAP_STATE_* */
static struct task_struct *cap_owner;
static u64 cap_entry_sp;        /* rsp at the entry (points at the return address) */

/* ---- buffers ---------------------------------------------------------- */

static void *cap_reserve(struct cap_buf *b, u32 len, u32 type, bool end_record)
{
	struct kjit_cap_rec *r;
	u64 room = b->cap - b->used;

	len = ALIGN(len, 8);
	if (!end_record && b == &ev && len + CAP_END_RESERVE > room)
		return NULL;
	if (len > room)
		return NULL;
	r = (struct kjit_cap_rec *)(b->p + b->used);
	r->type = type;
	r->len = len;
	return r;
}

static void cap_commit(struct cap_buf *b, void *rec)
{
	struct kjit_cap_rec *r = rec;

	smp_wmb();
	WRITE_ONCE(b->used, b->used + r->len);
}

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

/* Event space for the owner, or NULL after ending the capture (overflow). */
static void *ev_reserve(u32 len, u32 type)
{
	void *r = cap_reserve(&ev, len, type, false);

	if (!r)
		cap_end(KJIT_CAP_END_OVERFLOW);
	return r;
}

static u64 cap_icount(void)
{
	return kjit_config_icount();
}

/* Ends the owner's open invocation. */
static void cap_end(u32 reason)
{
	struct kjit_cap_end *e;

	cap_pending.set = false;   /* flushed by cap_ret; else the invocation is cut short */

	e = cap_reserve(&ev, sizeof(*e), KJIT_CAP_END, true);
	if (e) {
		e->reason = reason;
		e->pad = 0;
		e->icount = cap_icount();
		cap_commit(&ev, e);
	}
	if (reason == KJIT_CAP_END_OVERFLOW) {
		cap_flags |= KJIT_CAP_F_OVERFLOW;
		WRITE_ONCE(cap_state, KJIT_CAP_STATE_DONE);
	}
	if (atomic_inc_return(&cap_done_n) >= cap_count)
		WRITE_ONCE(cap_state, KJIT_CAP_STATE_DONE);
	smp_wmb();
	WRITE_ONCE(cap_owner, NULL);
}

static inline bool is_owner(void)
{
	return READ_ONCE(cap_owner) == current && READ_ONCE(cap_state) == KJIT_CAP_STATE_ARMED;
}

/* ---- routines called from translated code ----------------------------- */

static struct kjit_cap_begin *cap_open;   /* BEGIN being filled (owner only) */

static void cap_entry_a(u64 rax, u64 rcx, u64 rdx, u64 rbx, u64 rsp, u64 rbp)
{
	struct kjit_cap_begin *b;

	if (READ_ONCE(cap_state) != KJIT_CAP_STATE_ARMED || !in_task())
		return;
	if (cap_pid && task_tgid_nr(current) != cap_pid)
		return;
	if (READ_ONCE(cap_owner) == current) {
		/* The previous invocation never returned through the cache. */
		cap_end(KJIT_CAP_END_LEFT_CACHE);
		if (READ_ONCE(cap_state) != KJIT_CAP_STATE_ARMED)
			return;
	}
	if (cmpxchg(&cap_owner, NULL, current) != NULL)
		return;            /* another task's invocation is being recorded */
	b = ev_reserve(sizeof(*b), KJIT_CAP_BEGIN);
	if (!b) {
		cap_open = NULL;
		return;
	}
	memset((u8 *)b + sizeof(b->h), 0, sizeof(*b) - sizeof(b->h));
	b->gpr[KJIT_REG_RAX] = rax;
	b->gpr[KJIT_REG_RCX] = rcx;
	b->gpr[KJIT_REG_RDX] = rdx;
	b->gpr[KJIT_REG_RBX] = rbx;
	b->gpr[KJIT_REG_RSP] = rsp;
	b->gpr[KJIT_REG_RBP] = rbp;
	b->pid = task_pid_nr(current);
	cap_open = b;
	cap_entry_sp = rsp;
}

static void cap_entry_b(u64 rsi, u64 rdi, u64 r8, u64 r9, u64 r10, u64 r11)
{
	struct kjit_cap_begin *b = cap_open;

	if (!is_owner() || !b)
		return;
	b->gpr[KJIT_REG_RSI] = rsi;
	b->gpr[KJIT_REG_RDI] = rdi;
	b->gpr[KJIT_REG_R8] = r8;
	b->gpr[KJIT_REG_R9] = r9;
	b->gpr[KJIT_REG_R10] = r10;
	b->gpr[KJIT_REG_R11] = r11;
}

static void cap_entry_c(u64 r12, u64 r13, u64 r14, u64 r15, u64 flags, u64 pc)
{
	struct kjit_cap_begin *b = cap_open;
	struct kjit_cap_stack *s;
	unsigned long base, top, from;
	u32 n;

	if (!is_owner() || !b)
		return;
	cap_open = NULL;
	b->gpr[KJIT_REG_R12] = r12;
	b->gpr[KJIT_REG_R13] = r13;
	b->gpr[KJIT_REG_R14] = r14;
	b->gpr[KJIT_REG_R15] = r15;
	b->rflags = flags;
	b->entry_pc = pc;
	preempt_disable();
	b->gs_base = this_cpu_read(this_cpu_off);
	b->cpu = smp_processor_id();
	preempt_enable();
	b->icount = cap_icount();
	cap_commit(&ev, b);

	/* The stack above rsp: the return address, the caller's frames and
	 * the syscall's pt_regs. */
	base = (unsigned long)task_stack_page(current);
	top = base + THREAD_SIZE;
	from = (unsigned long)b->gpr[KJIT_REG_RSP];
	if (from < base || from >= top)
		from = top;        /* not on the task stack: no copy */
	n = top - from;
	s = ev_reserve(sizeof(*s) + n, KJIT_CAP_STACK);
	if (!s)
		return;
	s->base = base;
	s->size = THREAD_SIZE;
	s->from = from;
	memcpy(s + 1, (void *)from, n);
	cap_commit(&ev, s);
}

static void cap_block(u64 pc, u64 ninsns, u64 flags)
{
	struct kjit_cap_block *r;

	if (!is_owner())
		return;
	cap_flush_pending();
	r = ev_reserve(sizeof(*r), KJIT_CAP_BLOCK);
	if (!r)
		return;
	r->pc = pc;
	r->ninsns = ninsns;
	r->flags = flags;
	cap_commit(&ev, r);
}

static void cap_log_read(u64 pc, u64 addr, u64 ea, u32 size, u32 flags)
{
	struct kjit_cap_read *r;
	u8 *val;
	long err;

	if (size > CAP_MAX_READ) {
		cap_end(KJIT_CAP_END_OVERFLOW);
		return;
	}
	r = ev_reserve(sizeof(*r) + size, KJIT_CAP_READ);
	if (!r)
		return;
	r->pc = pc;
	r->addr = addr;
	r->ea = ea;
	r->size = size;
	val = (u8 *)(r + 1);
	if (addr < TASK_SIZE_MAX) {
		flags |= KJIT_CAP_RD_USER;
		err = copy_from_user_nofault(val, (const void __user *)(unsigned long)addr, size);
	} else {
		err = copy_from_kernel_nofault(val, (const void *)(unsigned long)addr, size);
	}
	if (err) {
		memset(val, 0, size);
		flags |= KJIT_CAP_RD_FAILED;
	}
	r->flags = flags;
	cap_commit(&ev, r);
}

static u64 cap_seg_base(u64 seg)
{
	if (seg == KJIT_SEG_GS)
		return raw_cpu_read(this_cpu_off);
	if (seg == KJIT_SEG_FS)
		return current->thread.fsbase;
	return 0;
}

static void cap_read(u64 pc, u64 ea, u64 size, u64 seg)
{
	if (!is_owner())
		return;
	cap_flush_pending();
	cap_log_read(pc, ea + cap_seg_base(seg), ea, size, seg);
}

/* A plain load is logged after it ran (see cap_instrument_read): the call before
 * it only notes the address, which the load may overwrite (mov (%rax),%rax). */
static void cap_load_before(u64 pc, u64 ea, u64 size, u64 seg)
{
	if (!is_owner())
		return;
	cap_flush_pending();
	cap_pending = (struct cap_pending_read){ .pc = pc, .ea = ea, .size = size, .seg = seg, .set = true };
}

static void cap_load_after(void)
{
	if (is_owner())
		cap_flush_pending();
}

/* cap_string's kind: the element width (1, 2, 4, 8) | these */
#define CAP_STR_REP 0x100          /* rcx elements */
#define CAP_STR_TWO_SOURCES 0x200  /* cmps: rsi and rdi */
#define CAP_STR_RDI_ONLY 0x400     /* scas */

static void cap_string(u64 pc, u64 rsi, u64 rdi, u64 rcx, u64 flags, u64 kind)
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
static void cap_nondet(u64 pc, u64 dest, u64 rcx, u64 rdx, u64 rbx, u64 flags)
{
	struct kjit_cap_nondet *r;

	if (!is_owner())
		return;
	cap_flush_pending();
	r = ev_reserve(sizeof(*r), KJIT_CAP_NONDET);
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
	cap_commit(&ev, r);
}

static void cap_ret(u64 pc, u64 rsp)
{
	if (!is_owner())
		return;
	cap_flush_pending();
	if (rsp != cap_entry_sp)
		return;
	cap_end(KJIT_CAP_END_RETURNED);
}

/* ---- instrumentation -------------------------------------------------- */

/* The READ event of one instruction.  A plain load (it writes no memory,
 * falls through, runs once) is logged after it: a value read before it,
 * across the logging call, can differ from what the load then sees when an
 * interrupt or another CPU writes in between (a tick bumping the timekeeper's
 * seqcount made a replay retry a loop the kernel did not).  Under TCG no
 * interrupt or vCPU switch falls between a load and the call after it.
 * Read-modify-writes, transfers and string instructions keep the call
 * before: their memory afterwards is not what they read. */
static void cap_instrument_read(struct kjit_insn *in, bool simple)
{
	u32 size = kjit_insn_memory_size(in), seg = kjit_insn_mem_segment(in);

	if (simple && !kjit_insn_writes_memory(in) && kjit_insn_cf_class(in) == KJIT_CF_NONE &&
	    kjit_insert_call(in, KJIT_IPOINT_AFTER, (void *)cap_load_after, 0) == 0) {
		kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)cap_load_before, 4,
				 KJIT_ARG_INSN_PC(), KJIT_ARG_MEM_EA(), KJIT_ARG_CONST(size),
				 KJIT_ARG_CONST(seg));
		return;
	}
	kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)cap_read, 4, KJIT_ARG_INSN_PC(),
			 KJIT_ARG_MEM_EA(), KJIT_ARG_CONST(size), KJIT_ARG_CONST(seg));
}

/* Before a string instruction that reads: its source range (cap_string). */
static void cap_instrument_string(struct kjit_insn *in, enum kjit_string_op op)
{
	u32 kind = kjit_insn_string_width(in);

	if (op == KJIT_STRING_CMPS)
		kind |= CAP_STR_TWO_SOURCES;
	else if (op == KJIT_STRING_SCAS)
		kind |= CAP_STR_RDI_ONLY;
	if (kjit_insn_has_rep_prefix(in))
		kind |= CAP_STR_REP;
	kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)cap_string, 6, KJIT_ARG_INSN_PC(),
			 KJIT_ARG_REG(KJIT_REG_RSI), KJIT_ARG_REG(KJIT_REG_RDI),
			 KJIT_ARG_REG(KJIT_REG_RCX), KJIT_ARG_FLAGS(), KJIT_ARG_CONST(kind));
}

static void cap_on_block(struct kjit_block *block, void *arg)
{
	u32 n = kjit_block_insn_count(block), i, total = 0, flags = 0;
	u64 pc = kjit_block_pc(block);
	struct kjit_insn *last;
	struct kjit_cap_code *c;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		total += kjit_insn_length(kjit_block_insn(block, i));
	/* The live bytes of the block (built under the engine lock: one writer). */
	c = cap_reserve(&code, sizeof(*c) + total, KJIT_CAP_CODE, true);
	if (c) {
		c->pc = pc;
		c->len = total;
		c->pad = 0;
		if (copy_from_kernel_nofault(c + 1, (void *)(unsigned long)pc, total) == 0)
			cap_commit(&code, c);
	} else {
		cap_flags |= KJIT_CAP_F_CODE_OVERFLOW;
	}

	last = kjit_block_insn(block, n - 1);
	if (kjit_insn_is_call(last) && kjit_insn_cf_class(last) != KJIT_CF_FENTRY)
		flags |= KJIT_CAPF_BLOCK_ENDS_IN_CALL;
	if (pc == READ_ONCE(cap_target)) {
		struct kjit_insn *f = kjit_block_insn(block, 0);

		kjit_insert_call(f, KJIT_IPOINT_BEFORE, (void *)cap_entry_a, 6,
				 KJIT_ARG_REG(KJIT_REG_RAX), KJIT_ARG_REG(KJIT_REG_RCX),
				 KJIT_ARG_REG(KJIT_REG_RDX), KJIT_ARG_REG(KJIT_REG_RBX),
				 KJIT_ARG_REG(KJIT_REG_RSP), KJIT_ARG_REG(KJIT_REG_RBP));
		kjit_insert_call(f, KJIT_IPOINT_BEFORE, (void *)cap_entry_b, 6,
				 KJIT_ARG_REG(KJIT_REG_RSI), KJIT_ARG_REG(KJIT_REG_RDI),
				 KJIT_ARG_REG(KJIT_REG_R8), KJIT_ARG_REG(KJIT_REG_R9),
				 KJIT_ARG_REG(KJIT_REG_R10), KJIT_ARG_REG(KJIT_REG_R11));
		kjit_insert_call(f, KJIT_IPOINT_BEFORE, (void *)cap_entry_c, 6,
				 KJIT_ARG_REG(KJIT_REG_R12), KJIT_ARG_REG(KJIT_REG_R13),
				 KJIT_ARG_REG(KJIT_REG_R14), KJIT_ARG_REG(KJIT_REG_R15),
				 KJIT_ARG_FLAGS(), KJIT_ARG_INSN_PC());
	}
	kjit_insert_call(kjit_block_insn(block, 0), KJIT_IPOINT_BEFORE, (void *)cap_block, 3,
			 KJIT_ARG_INSN_PC(), KJIT_ARG_CONST(n), KJIT_ARG_CONST(flags));

	for (i = 0; i < n; i++) {
		struct kjit_insn *in = kjit_block_insn(block, i);
		enum kjit_string_op sop = kjit_insn_string_op(in);
		int dest = kjit_insn_nondeterministic_reg(in);

		if (kjit_insn_reads_memory(in) && !kjit_insn_is_memory_hint(in))
			cap_instrument_read(in, sop == KJIT_STRING_NONE && !kjit_insn_has_rep_prefix(in));
		if (sop != KJIT_STRING_NONE && sop != KJIT_STRING_STOS)
			cap_instrument_string(in, sop);
		if (dest >= 0)
			kjit_insert_call(in, KJIT_IPOINT_AFTER, (void *)cap_nondet, 6,
					 KJIT_ARG_CONST(kjit_insn_pc(in)), KJIT_ARG_REG(dest),
					 KJIT_ARG_REG(KJIT_REG_RCX), KJIT_ARG_REG(KJIT_REG_RDX),
					 KJIT_ARG_REG(KJIT_REG_RBX), KJIT_ARG_FLAGS());
		if (kjit_insn_is_return(in))
			kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)cap_ret, 2,
					 KJIT_ARG_INSN_PC(), KJIT_ARG_REG(KJIT_REG_RSP));
	}
}

static const struct kjit_plugin cap_plugin = {
	.name = "capture",
	.on_block = cap_on_block,
};

/* ---- control ---------------------------------------------------------- */

static void cap_add_code(u64 pc, u32 len)
{
	struct kjit_cap_code *c;

	c = cap_reserve(&code, sizeof(*c) + len, KJIT_CAP_CODE, true);
	if (!c)
		return;
	c->pc = pc;
	c->len = len;
	c->pad = 0;
	if (copy_from_kernel_nofault(c + 1, (void *)(unsigned long)pc, len) == 0)
		cap_commit(&code, c);
}

/* The thunks the engine treats as transfers: the reference replay executes
 * their bodies. */
static void cap_add_thunks(void)
{
	struct kjit_os_kernel_facts f;
	int i;

	kjit_shim_fill_facts(&f);
	if (f.return_thunk)
		cap_add_code(f.return_thunk, 32);
	for (i = 0; i < KJIT_GPR_COUNT; i++) {
		if (f.retpoline_thunk[i])
			cap_add_code(f.retpoline_thunk[i], 32);
		if (f.its_thunk[i])
			cap_add_code(f.its_thunk[i], 32);
	}
}

static void cap_stop_locked(void)
{
	if (cap_registered) {
		WRITE_ONCE(cap_state, KJIT_CAP_STATE_DONE);
		kjit_shim_translate_leaves(false);   /* before the flush below */
		kjit_host_remove_plugin(&cap_plugin);
		cap_registered = false;
		/* Code translated before the flush may still call the routines. */
		kjit_entry_quiesce();
	}
	if (READ_ONCE(cap_owner))
		cap_end(KJIT_CAP_END_STOPPED);
	WRITE_ONCE(cap_state, cap_state == KJIT_CAP_STATE_IDLE ? KJIT_CAP_STATE_IDLE
							     : KJIT_CAP_STATE_DONE);
}

static void cap_free_locked(void)
{
	vfree(ev.p);
	vfree(code.p);
	memset(&ev, 0, sizeof(ev));
	memset(&code, 0, sizeof(code));
}

static int cap_start(struct kjit_ioc_capture *c)
{
	u64 addr;
	u32 evkb = c->buf_kb ? c->buf_kb : 4096, cokb = c->code_kb ? c->code_kb : 1024;
	int ret;

	if (c->flags || c->count < 1 || c->count > 1024 || evkb > 65536 || cokb > 16384 ||
	    !kjit_valid_name(c->name, sizeof(c->name)))
		return -EINVAL;
	addr = kjit_ksym(c->name);
	if (!addr)
		return -ENOENT;
	cap_stop_locked();
	cap_free_locked();
	ev.p = vzalloc((u64)evkb << 10);
	code.p = vzalloc((u64)cokb << 10);
	if (!ev.p || !code.p) {
		cap_free_locked();
		return -ENOMEM;
	}
	ev.cap = (u64)evkb << 10;
	code.cap = (u64)cokb << 10;
	cap_target = addr + MCOUNT_INSN_SIZE;
	cap_pid = c->pid;
	cap_count = c->count;
	atomic_set(&cap_done_n, 0);
	cap_flags = 0;
	cap_owner = NULL;
	cap_open = NULL;
	cap_add_thunks();
	WRITE_ONCE(cap_state, KJIT_CAP_STATE_ARMED);
	/* Registration flushes: every block is rebuilt, so its bytes are
	 * copied and its instrumentation includes ours, and memcpy/memset are
	 * translated (their reads are part of the invocation). */
	kjit_shim_translate_leaves(true);
	ret = kjit_host_add_plugin(&cap_plugin);
	if (ret) {
		kjit_shim_translate_leaves(false);
		WRITE_ONCE(cap_state, KJIT_CAP_STATE_IDLE);
		return ret;
	}
	cap_registered = true;
	pr_info("capture armed for %s (pid %u, count %u)\n", c->name, c->pid, c->count);
	return 0;
}

static int cap_read_out(struct kjit_ioc_capture_read *r, void __user *uarg)
{
	u64 evn = READ_ONCE(ev.used), con = READ_ONCE(code.used);

	smp_rmb();
	r->state = READ_ONCE(cap_state);
	r->ncaptured = atomic_read(&cap_done_n);
	r->flags = cap_flags;
	r->event_bytes = evn;
	r->code_bytes = con;
	if (r->buf_ptr && r->buf_len >= evn && evn &&
	    copy_to_user(u64_to_user_ptr(r->buf_ptr), ev.p, evn))
		return -EFAULT;
	if (r->code_ptr && r->code_len >= con && con &&
	    copy_to_user(u64_to_user_ptr(r->code_ptr), code.p, con))
		return -EFAULT;
	if (copy_to_user(uarg, r, sizeof(*r)))
		return -EFAULT;
	return 0;
}

/* KJIT_IOC_CAPTURE_START: arms a capture (replacing the previous one). */
int kjit_capture_start(struct kjit_ioc_capture *c)
{
	int ret;

	c->name[sizeof(c->name) - 1] = 0;
	mutex_lock(&cap_mutex);
	ret = cap_start(c);
	mutex_unlock(&cap_mutex);
	return ret;
}

void kjit_capture_stop(void)
{
	mutex_lock(&cap_mutex);
	cap_stop_locked();
	mutex_unlock(&cap_mutex);
}

/* KJIT_IOC_CAPTURE_READ: state, and the buffers when they fit. */
int kjit_capture_read(struct kjit_ioc_capture_read *r, void __user *uarg)
{
	int ret;

	mutex_lock(&cap_mutex);
	ret = cap_read_out(r, uarg);
	mutex_unlock(&cap_mutex);
	return ret;
}

void kjit_capture_exit(void)
{
	mutex_lock(&cap_mutex);
	cap_stop_locked();
	cap_free_locked();
	mutex_unlock(&cap_mutex);
}
