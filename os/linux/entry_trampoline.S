/* SPDX-License-Identifier: GPL-2.0 */
/* The direct-call entry trampoline (entry_direct.c registers it with
 * register_ftrace_direct_multi): an attached function's fentry site calls
 * it, so [rsp] = the function + MCOUNT_INSN_SIZE (ip5) and [rsp+8] = the
 * function's return address.  It replaces ip5 in that slot with where the
 * function goes on, ip5 itself or its translation, and returns: one call,
 * one return, the state the IPMODIFY handler leaves.
 *
 * The fast path enters without calling C when entry_table.c holds a
 * translation for ip5 and knows the return address as a stop address, and
 * this CPU is neither in an NMI nor holding the engine lock (the C path
 * checks both and skips: a gate may need the lock).  Everything else, the
 * entry policy included, is the C path's (kjit_direct_slow, entry_ftrace.c).
 * Flags are clobbered: nothing reads them at a function's entry. */
#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/percpu.h>
#include <asm/nospec-branch.h>
#include "entry_table.h"

	.text
SYM_FUNC_START(kjit_direct_tramp)
	pushq	%rax
	pushq	%rcx
	testl	$KJIT_NMI_MASK, PER_CPU_VAR(__preempt_count)
	jnz	.Lslow
	movl	PER_CPU_VAR(cpu_number), %eax
	cmpl	%eax, kjit_engine_lock_cpu(%rip)
	je	.Lslow
	/* the return address must be a known stop address */
	movq	24(%rsp), %rax
	movq	%rax, %rcx
	shrq	$8, %rcx
	xorl	%eax, %ecx
	andl	$(KJIT_STOP_SLOTS - 1), %ecx
	cmpq	%rax, kjit_stop_cache(, %rcx, 8)
	jne	.Lslow
	/* ip5's slot, at its home position only */
	movq	16(%rsp), %rax
	movl	%eax, %ecx
	shrl	$4, %ecx
	andl	$(KJIT_ENTRY_SLOTS - 1), %ecx
	movq	kjit_entry_slots(, %rcx, 8), %rcx
	shlq	$32, %rax
	xorq	%rcx, %rax		/* high half 0 iff the key matches */
	movq	%rax, %rcx
	shrq	$32, %rcx
	jnz	.Lslow
	testl	%eax, %eax		/* a translation has bit 31 set */
	jns	.Lslow
	cltq				/* the cache address, sign-extended */
	incq	PER_CPU_VAR(kjit_fast_entry_count)
	movq	%rax, 16(%rsp)
	popq	%rcx
	popq	%rax
	RET
.Lslow:
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
