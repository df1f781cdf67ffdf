/* SPDX-License-Identifier: GPL-2.0 */
/* The direct-call entry trampoline (entry_direct.c registers it with
 * kjit_register_ftrace_direct): an attached function's fentry site calls
 * it, so [rsp] = the fentry site + MCOUNT_INSN_SIZE (ip5) and [rsp+8] = the
 * function's return address.  It replaces ip5 in that slot with where the
 * function goes on, ip5 itself or its translation, and returns: one call,
 * one return, the state the IPMODIFY handler leaves.
 *
 * The fast path enters without calling C when ip5's slot in entry_table.c
 * holds a translation and the return address is a known stop address (the
 * slot's last one, else the stop cache), and this CPU is neither in an NMI
 * nor inside kjit in any context (the guard byte, entry_guard.h: the C path
 * declines an entry nested in kjit, which may hold the engine lock, and
 * lets an interrupt of kjit's task-context path in).  While a filter by
 * task is on (the active tool's, kcov: tasks with coverage; the policy's:
 * a thread, comm, cgroup or CPUs), a task it does not admit goes on
 * natively after a test of a per-CPU byte, counted as filtered.  Everything
 * else, the rest of the entry policy included, is the C path's (kjit_direct_slow, entry_decide.c).
 *
 * Clobbered: the flags, r10 and r11.  Nothing reads them at a function's
 * entry: they pass no argument, and ftrace's own ftrace_caller saves only
 * rax, rcx, rdx, rsi, rdi, r8 and r9 around the C callbacks it calls from
 * every traced function's fentry site. */
#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/percpu.h>
#include <asm/nospec-branch.h>
#include "entry_table.h"
#include "compat.h"

	.text
SYM_FUNC_START(kjit_direct_tramp)
	/* The filter first: a task it refuses (every task but the covered
	 * ones beside a KCOV user) goes on natively after the fewest
	 * instructions, in an NMI too. */
	cmpb	$0, kjit_entry_task_filter(%rip)
	jne	.Ltask_filter
	testl	$KJIT_NMI_MASK, PER_CPU_VAR(KJIT_PREEMPT_COUNT_VAR)
	jnz	.Lslow
.Lnot_nmi:
	cmpb	$0, PER_CPU_VAR(kjit_guard)
	jne	.Lslow
	/* ip5's slot (home position only): 16 bytes, so the offset is ip5's
	 * bits 4 and up, masked */
	movl	(%rsp), %r10d
	andl	$KJIT_ENTRY_SLOT_MASK, %r10d
	movq	8(%rsp), %r11
	cmpq	%r11, kjit_entry_slots + 8(%r10)
	jne	.Lstop_cache
.Lstop_known:
	/* the slot's word is ip5's low half above its state or translation,
	 * whose bit 31 is flipped: after the xor, a match with a translation
	 * leaves a value below 2^31 */
	movq	(%rsp), %r11
	shlq	$32, %r11
	xorq	kjit_entry_slots(%r10), %r11
	cmpq	$0x7fffffff, %r11
	ja	.Lslow
	xorq	$-0x80000000, %r11	/* the cache address, sign-extended */
	incq	PER_CPU_VAR(kjit_fast_entry_count)
	movq	%r11, (%rsp)
	RET
.Lstop_cache:
	movl	%r11d, %r10d
	andl	$KJIT_STOP_SLOT_MASK, %r10d
	cmpq	%r11, kjit_stop_cache(%r10)
	jne	.Lslow
	movl	(%rsp), %r10d
	andl	$KJIT_ENTRY_SLOT_MASK, %r10d
	jmp	.Lstop_known
/* A filter by task (the tool's, the policy's: entry_table.h) admits only
 * the tasks it marked, in task context: any other runs natively after a
 * test of this CPU's admitted bits against the filters that are on.
 * in_task() is read from preempt_count, except on PREEMPT_RT, where serving
 * softirqs is counted in the task: the C path decides there. */
.Ltask_filter:
	movzbl	PER_CPU_VAR(kjit_entry_task_admitted), %r10d
	notl	%r10d
	testb	%r10b, kjit_entry_task_filter(%rip)
	jnz	.Lfiltered
#ifdef CONFIG_PREEMPT_RT
	jmp	.Lslow
#else
	testl	$KJIT_NOT_TASK_MASK, PER_CPU_VAR(KJIT_PREEMPT_COUNT_VAR)
	jnz	.Lslow			/* an NMI among the rest */
	jmp	.Lnot_nmi
#endif
.Lfiltered:
	incq	PER_CPU_VAR(kjit_fast_filtered_count)
	RET
.Lslow:
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	movq	9*8(%rsp), %rdi		/* ip5 */
	movq	10*8(%rsp), %rsi	/* the function's return address */
	leaq	10*8(%rsp), %rdx	/* the function's stack pointer at entry */
	call	kjit_direct_slow
	movq	%rax, 9*8(%rsp)
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	RET
SYM_FUNC_END(kjit_direct_tramp)
