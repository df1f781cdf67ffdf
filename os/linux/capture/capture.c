// SPDX-License-Identifier: GPL-2.0
/* Capture: a kjit plugin that records invocations of one attached function
 * (or, KJIT_CAPTURE_EACH_ATTACHED, one complete invocation of each function
 * attached when it is armed) completely enough to re-execute them off-line
 * (kjit-sim replay).
 *
 * While armed, every block the engine builds gets:
 *  - its live code bytes copied (after alternatives/static keys) into the
 *    code buffer, once per build;
 *  - at its first instruction a BLOCK event (pc, instructions);
 *  - at a target's entry block (the attached function + 5, after its
 *    fentry call) a context call (every GPR and rflags) that decides
 *    whether this entry is recorded (the pid filter, one invocation at a
 *    time, targets already done) and writes the BEGIN event, the GS base
 *    (the per-CPU offset) and a copy of the task's stack above rsp;
 *  - for every instruction with an explicit memory read, a READ event with
 *    the address (segment base added) and the value, read with the nofault
 *    accessors (user addresses through copy_from_user_nofault): right after
 *    a plain load, before any other instruction (cap_instrument_read);
 *  - before string instructions that read (movs, lods, cmps, scas), the
 *    whole source range (rsi, rcx, DF);
 *  - after every instruction whose result a replay cannot recompute (the
 *    decoder's kjit_insn_nondet_kind: rdtsc, cpuid, rdpkru, xgetbv, rdmsr,
 *    lsl, mov from cr3, verw, sgdt, wrmsr, out...), its result registers
 *    and flags (NONDET); after one that reads memory off the stack
 *    without loading it into a register and sets flags (a cmp, test or
 *    this_cpu_dec), its flags (NONDET too);
 *  - before every return, a check whether rsp is the entry's: the END of
 *    the invocation;
 *  - before a call into the scheduler funnel (__schedule), a note of the
 *    sleep, and at the first instruction of the block at its return address
 *    a context call (every GPR and rflags): the RESUME event, where the
 *    task continues in the cache after it woke (sched_resume.c), perhaps on
 *    another CPU.  The replay skips the funnel and loads these registers.
 *    A call the cache makes natively (__do_softirq: other work, never
 *    translated) is recorded the same way, without the sleep: its reads
 *    are not the invocation's, and the replay skips it too.
 * Implicit stack reads (pop, ret, leave) are served in replay by the stack
 * copy and the replayed pushes; everything else comes from the READ log.
 * Which instructions are string instructions, non-deterministic, or carry
 * a memory operand that is only an address (nop, prefetch) is the engine
 * decoder's answer (kjit_insn_string_op, kjit_insn_nondeterministic_reg,
 * kjit_insn_is_memory_hint).  Record layouts: include/uapi/kjit/capture_format.h.
 *
 * The recording itself is capture_log.c (the owner task, the events),
 * capture_regs.c (BEGIN and RESUME) and capture_buf.c (the buffers); this
 * file instruments blocks, and arms and stops captures under cap_mutex. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ftrace.h>
#include <linux/mm.h>
#include <linux/sort.h>
#include "capture.h"
#include "capture_buf.h"
#include "capture_log.h"
#include "capture_regs.h"
#include "engine_host.h"
#include "entry_attach.h"
#include "shim.h"
#include "symbols.h"
#include "fentry.h"
#include "kjit/plugin.h"

static DEFINE_MUTEX(cap_mutex);
static bool cap_registered;
/* __schedule: calls to it are marked (kjit_cap_sleep). */
static u64 sched_funnel;

/* Whether the replay skips a call to `target`, continuing from a RESUME
 * record: the scheduler funnel, and what the cache calls natively. */
static bool cap_skipped_call(u64 target)
{
	return (sched_funnel && target == sched_funnel) || kjit_shim_is_native_call(target);
}

/* Whether `pc` is the return address of a direct call the replay skips
 * (how __schedule and __do_softirq are called).  A false match costs a
 * context call that finds no pending record. */
static bool cap_after_skipped_call(u64 pc)
{
	u8 insn[5];
	s32 rel;

	if (copy_from_kernel_nofault(insn, (void *)(unsigned long)(pc - sizeof(insn)), sizeof(insn)))
		return false;
	if (insn[0] != 0xe8)
		return false;
	memcpy(&rel, insn + 1, sizeof(rel));
	return cap_skipped_call(pc + (s64)rel);
}

/* ---- instrumentation -------------------------------------------------- */

/* After an instruction that reads memory and writes no register with what
 * it read (a cmp or test, this_cpu_dec, a locked add): the flags it left,
 * as a NONDET record (docs/capture-format.md).  Its READ is taken before
 * it (a read-modify-write) or after it (a compare), not by it, and the word
 * can change in between: an interrupt of this task changes per-CPU words
 * (the resched IPI clears preempt_count's need-resched bit), another CPU
 * changes shared ones (idle_cpu's compare of another runqueue's curr with
 * its idle task, as that CPU goes idle).  The value logged is then not the
 * one the instruction saw.  The flags are, and they are all such an
 * instruction passes on besides memory, which every later read logs again.
 * The stack is only this task's: no record there. */
static void cap_instrument_flags_after(struct kjit_insn *in)
{
	if (kjit_insn_cf_class(in) != KJIT_CF_NONE || kjit_insn_mem_on_stack(in) ||
	    !kjit_insn_modifies_flags(in))
		return;
	kjit_insert_call(in, KJIT_IPOINT_AFTER, (void *)kjit_cap_nondet, 6, KJIT_ARG_INSN_PC(),
			 KJIT_ARG_CONST(0), KJIT_ARG_CONST(0), KJIT_ARG_CONST(0), KJIT_ARG_CONST(0),
			 KJIT_ARG_FLAGS());
}

/* The READ event of one instruction.  A value read before the instruction,
 * across the logging call, can differ from what it then sees when an
 * interrupt or another CPU writes in between (a tick bumping the timekeeper's
 * seqcount made a replay retry a loop the kernel did not).  So:
 *  - mov/movzx/movsx into a GPR, cmpxchg, xadd and xchg leave what they read
 *    in a register: that register is logged after them, exact even when
 *    another CPU writes the word right before or after (a cmpxchg loop that
 *    retried in the kernel retries in the replay; read_hpet's lock word,
 *    taken by the other vCPU just after the load, is logged as the load saw
 *    it);
 *  - other plain loads (cmp, test, add reg,[mem]... : no memory written,
 *    falls through, runs once) are read again from memory right after: no
 *    interrupt falls between them, only another CPU's write can;
 *  - other read-modify-writes, transfers and string instructions keep the
 *    call before: their memory afterwards is not what they read. */
static void cap_instrument_read(struct kjit_insn *in, bool simple)
{
	u32 size = kjit_insn_memory_size(in), seg = kjit_insn_mem_segment(in);
	int value_reg = kjit_insn_atomic_old_value_reg(in), bit_offset = kjit_insn_bit_offset_reg(in);

	if (value_reg < 0)
		value_reg = kjit_insn_loaded_value_reg(in);
	if (value_reg < 0)
		cap_instrument_flags_after(in);

	/* bt* with a register offset: the word the bit is in (a plain bt after
	 * it, like any load; bts/btr/btc before). */
	if (bit_offset >= 0) {
		if (!kjit_insn_writes_memory(in) &&
		    kjit_insert_call(in, KJIT_IPOINT_AFTER, (void *)kjit_cap_load_after, 0) == 0)
			kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)kjit_cap_bit_load_before, 5,
					 KJIT_ARG_INSN_PC(), KJIT_ARG_MEM_EA(), KJIT_ARG_CONST(size),
					 KJIT_ARG_CONST(seg), KJIT_ARG_REG(bit_offset));
		else
			kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)kjit_cap_bit_read, 5,
					 KJIT_ARG_INSN_PC(), KJIT_ARG_MEM_EA(), KJIT_ARG_CONST(size),
					 KJIT_ARG_CONST(seg), KJIT_ARG_REG(bit_offset));
		return;
	}

	if (value_reg >= 0 && size <= 8 && kjit_insn_cf_class(in) == KJIT_CF_NONE &&
	    kjit_insert_call(in, KJIT_IPOINT_AFTER, (void *)kjit_cap_read_after, 1,
			     KJIT_ARG_REG(value_reg)) == 0) {
		kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)kjit_cap_load_before, 4,
				 KJIT_ARG_INSN_PC(), KJIT_ARG_MEM_EA(), KJIT_ARG_CONST(size),
				 KJIT_ARG_CONST(seg));
		return;
	}

	if (simple && !kjit_insn_writes_memory(in) && kjit_insn_cf_class(in) == KJIT_CF_NONE &&
	    kjit_insert_call(in, KJIT_IPOINT_AFTER, (void *)kjit_cap_load_after, 0) == 0) {
		kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)kjit_cap_load_before, 4,
				 KJIT_ARG_INSN_PC(), KJIT_ARG_MEM_EA(), KJIT_ARG_CONST(size),
				 KJIT_ARG_CONST(seg));
		return;
	}
	kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)kjit_cap_read, 4, KJIT_ARG_INSN_PC(),
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
	kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)kjit_cap_string, 6, KJIT_ARG_INSN_PC(),
			 KJIT_ARG_REG(KJIT_REG_RSI), KJIT_ARG_REG(KJIT_REG_RDI),
			 KJIT_ARG_REG(KJIT_REG_RCX), KJIT_ARG_FLAGS(), KJIT_ARG_CONST(kind));
}

/* NONDET: the registers after instruction i.  Inside a swapgs pair (mov gs
 * in load_gs_index) nothing may be called: the record is taken after the
 * pair closes, when only swapgs and instructions that write nothing (the
 * nops or the mfence of the SWAPGS_FENCE alternative) lie between; otherwise
 * the instruction stays unlogged and a replay names it. */
static void cap_instrument_nondet(struct kjit_block *block, u32 i, int dest)
{
	u32 n = kjit_block_insn_count(block), j;
	struct kjit_insn *in = kjit_block_insn(block, i), *at = in;
	enum kjit_ipoint where = KJIT_IPOINT_AFTER;

	if (kjit_insn_gs_swapped(in, KJIT_IPOINT_AFTER)) {
		for (j = i + 1; j < n; j++) {
			struct kjit_insn *k = kjit_block_insn(block, j);

			if (!kjit_insn_gs_swapped(k, KJIT_IPOINT_BEFORE))
				break;
			if (kjit_insn_gs_swapped(k, KJIT_IPOINT_AFTER) && !kjit_insn_writes_nothing(k))
				return;  /* neither swapgs nor a nop or fence */
		}
		if (j == n)
			return;
		at = kjit_block_insn(block, j);
		where = KJIT_IPOINT_BEFORE;
	}
	kjit_insert_call(at, where, (void *)kjit_cap_nondet, 6,
			 KJIT_ARG_CONST(kjit_insn_pc(in)), KJIT_ARG_REG(dest),
			 KJIT_ARG_REG(KJIT_REG_RCX), KJIT_ARG_REG(KJIT_REG_RDX),
			 KJIT_ARG_REG(KJIT_REG_RBX), KJIT_ARG_FLAGS());
}

static void cap_on_block(struct kjit_block *block, void *arg)
{
	u32 n = kjit_block_insn_count(block), i, total = 0, flags = 0;
	u64 pc = kjit_block_pc(block);
	struct kjit_insn *last;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		total += kjit_insn_length(kjit_block_insn(block, i));
	/* The live bytes of the block, once per build. */
	kjit_capbuf_add_block_code(pc, total);

	last = kjit_block_insn(block, n - 1);
	if (kjit_insn_is_call(last) && kjit_insn_cf_class(last) != KJIT_CF_FENTRY)
		flags |= KJIT_CAPF_BLOCK_ENDS_IN_CALL;
	if (!kjit_insn_is_branch(last))
		flags |= KJIT_CAPF_BLOCK_CUT;
	/* A sleep the cache follows, or a call it makes natively: the replay
	 * skips it, up to its RESUME. */
	if (kjit_insn_is_call(last) && cap_skipped_call(kjit_insn_branch_target(last)))
		kjit_insert_call(last, KJIT_IPOINT_BEFORE,
				 kjit_insn_branch_target(last) == sched_funnel ? (void *)kjit_cap_sleep
									       : (void *)kjit_cap_native_call, 3,
				 KJIT_ARG_INSN_PC(), KJIT_ARG_CONST(kjit_insn_branch_target(last)),
				 KJIT_ARG_CONST(kjit_insn_pc(last) + kjit_insn_length(last)));
	if (cap_after_skipped_call(pc))
		kjit_insert_context_call(kjit_block_insn(block, 0), KJIT_IPOINT_BEFORE, kjit_cap_resumed);
	if (kjit_caplog_is_target(pc))
		kjit_insert_context_call(kjit_block_insn(block, 0), KJIT_IPOINT_BEFORE, kjit_cap_entry);
	kjit_insert_call(kjit_block_insn(block, 0), KJIT_IPOINT_BEFORE, (void *)kjit_cap_block, 3,
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
			cap_instrument_nondet(block, i, dest);
		if (kjit_insn_is_return(in))
			kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)kjit_cap_ret, 2,
					 KJIT_ARG_INSN_PC(), KJIT_ARG_REG(KJIT_REG_RSP));
	}
}

static const struct kjit_plugin cap_plugin = {
	.name = "capture",
	.on_block = cap_on_block,
};

/* ---- control ---------------------------------------------------------- */

/* The thunks the engine treats as transfers: the reference replay executes
 * their bodies. */
static void cap_add_thunks(void)
{
	struct kjit_os_kernel_facts f;
	int i;

	kjit_shim_fill_facts(&f);
	if (f.return_thunk)
		kjit_capbuf_add_code(f.return_thunk, 32);
	/* the mitigations' return thunks are longer (untraining sequences) */
	for (i = 0; i < KJIT_RETURN_THUNKS; i++)
		if (f.return_thunks[i])
			kjit_capbuf_add_code(f.return_thunks[i], 64);
	for (i = 0; i < KJIT_GPR_COUNT; i++) {
		if (f.retpoline_thunk[i])
			kjit_capbuf_add_code(f.retpoline_thunk[i], 32);
		if (f.its_thunk[i])
			kjit_capbuf_add_code(f.its_thunk[i], 32);
		if (f.call_thunk[i])
			kjit_capbuf_add_code(f.call_thunk[i], 32);
	}
}

static void cap_stop_locked(void)
{
	if (cap_registered) {
		kjit_caplog_set_state(KJIT_CAP_STATE_DONE);
		kjit_shim_translate_leaves(false);   /* before the flush below */
		kjit_host_remove_plugin(&cap_plugin);
		cap_registered = false;
		/* Code translated before the flush may still call the routines. */
		kjit_entry_quiesce();
	}
	kjit_caplog_stopped();
}

static int cap_u64_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* The entry block pcs of every attached function, sorted and distinct, in
 * *out (kvmalloc'd); their number, or -errno. */
static int cap_attached_targets(u64 **out)
{
	int n = kjit_nattached(), i, k = 0;
	char *name;
	u64 *t, addr;

	if (n <= 0)
		return -ENOENT;
	t = kvmalloc_array(n, sizeof(*t), GFP_KERNEL);
	name = kmalloc(KJIT_NAME_MAX, GFP_KERNEL);
	if (!t || !name) {
		kvfree(t);
		kfree(name);
		return -ENOMEM;
	}
	/* Attachments may change meanwhile: the ones there now are taken. */
	for (i = 0; i < n && kjit_attachment(i, name, &addr); i++)
		if (kjit_fentry_site(addr))
			t[k++] = kjit_fentry_site(addr) + MCOUNT_INSN_SIZE;
	kfree(name);
	sort(t, k, sizeof(*t), cap_u64_cmp, NULL);
	for (i = 0, n = 0; i < k; i++)
		if (!n || t[n - 1] != t[i])
			t[n++] = t[i];
	if (!n) {
		kvfree(t);
		return -ENOENT;
	}
	*out = t;
	return n;
}

static int cap_start(struct kjit_ioc_capture *c)
{
	bool each = c->flags & KJIT_CAPTURE_EACH_ATTACHED;
	u32 evkb = c->buf_kb ? c->buf_kb : 4096, cokb = c->code_kb ? c->code_kb : 1024;
	u64 *targets;
	int ret, n = 1;

	if ((c->flags & ~KJIT_CAPTURE_FLAGS) || evkb > 65536 || cokb > 16384)
		return -EINVAL;
	if (!each && (c->count < 1 || c->count > 1024 || !kjit_valid_name(c->name, sizeof(c->name))))
		return -EINVAL;
	if (each) {
		n = cap_attached_targets(&targets);
		if (n < 0)
			return n;
	} else {
		u64 addr = kjit_ksym(c->name), site;

		if (!addr)
			return -ENOENT;
		site = kjit_fentry_site(addr);
		if (!site)
			return -EINVAL;
		targets = kvmalloc(sizeof(*targets), GFP_KERNEL);
		if (!targets)
			return -ENOMEM;
		targets[0] = site + MCOUNT_INSN_SIZE;
	}
	sched_funnel = kjit_ksym("__schedule");
	cap_stop_locked();
	ret = kjit_caplog_prepare(targets, n, c->flags, c->pid, c->count, evkb, cokb);
	if (ret)
		return ret;
	cap_add_thunks();
	kjit_caplog_set_state(KJIT_CAP_STATE_ARMED);
	/* Registration flushes: every block is rebuilt, so its bytes are
	 * copied and its instrumentation includes ours, and memcpy/memset are
	 * translated (their reads are part of the invocation). */
	kjit_shim_translate_leaves(true);
	ret = kjit_host_add_plugin(&cap_plugin);
	if (ret) {
		kjit_shim_translate_leaves(false);
		kjit_caplog_set_state(KJIT_CAP_STATE_IDLE);
		return ret;
	}
	cap_registered = true;
	if (each)
		pr_info("capture armed for %d attached functions (pid %u%s)\n", n, c->pid,
			(c->flags & KJIT_CAPTURE_DESCENDANTS) ? " and descendants" : "");
	else
		pr_info("capture armed for %s (pid %u, count %u)\n", c->name, c->pid, c->count);
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
	ret = kjit_caplog_read_out(r, uarg);
	mutex_unlock(&cap_mutex);
	return ret;
}

void kjit_capture_exit(void)
{
	mutex_lock(&cap_mutex);
	cap_stop_locked();
	kjit_caplog_free();
	mutex_unlock(&cap_mutex);
}
