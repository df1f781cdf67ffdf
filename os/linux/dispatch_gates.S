/* SPDX-License-Identifier: GPL-2.0 */
/* The dispatcher gates (protocol: include/kjit/engine.h), and the
 * scheduler gate and its return stub (sched_resume.c).
 *
 * Both save every GPR and RFLAGS on the current stack (the kernel has no red
 * zone), call C (kernel C only needs 8-byte stack alignment, and leaving rsp
 * alone keeps the frame visible to objtool/ORC), put the returned address into a
 * stack slot, restore everything and finish with RET, which pops that slot
 * and jumps to it.  RET is `jmp __x86_return_thunk` in this kernel, so the
 * transfer goes through whatever return mitigation the CPU needs and objtool
 * sees an ordinary return; no per-CPU slot is used (a per-CPU slot would be
 * clobbered by an interrupt or a migration between the restore and the jump).
 *
 * Interrupt state is never changed: pushfq/popfq only.  Inside, AC is cleared
 * (ASM_CLAC, patched by alternatives) and DF cleared, as C expects; popfq
 * restores both.
 *
 * Frame after the pushes (offsets from %rsp):
 *   0*8 r15 ... 14*8 rax, 15*8 rflags, 16*8 R (stub return address),
 *   17*8 the program's rcx (indirect gate only).
 */
#include <linux/linkage.h>
#include <asm/asm.h>
#include <asm/smap.h>
#include <asm/nospec-branch.h>
#include <asm/unwind_hints.h>
#include <asm/percpu.h>
#include <asm/ibt.h>
#include <linux/objtool.h>
#include "compat.h"

.macro SAVE_ALL
	pushfq
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	ASM_CLAC
	cld
.endm

.macro RESTORE_ALL
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	popfq
.endm

#define F_RCX   (12*8)
#define F_R     (16*8)
#define F_PRCX  (17*8)

	.text
/* call kjit_gate_direct ; .long exit_id */
SYM_CODE_START(kjit_gate_direct)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR		/* reached by direct calls from the cache only */		/* [rsp] = R, like a call */
	SAVE_ALL
	movq	F_R(%rsp), %rdi
	call	kjit_linux_direct_exit
	movq	%rax, F_R(%rsp)		/* R's slot now holds the target */
	RESTORE_ALL
	RET				/* pops the target, jumps to it */
SYM_CODE_END(kjit_gate_direct)

/* rcx = original target, [rsp+8] = program's rcx;
 * call kjit_gate_indirect ; .long chain_id */
SYM_CODE_START(kjit_gate_indirect)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR		/* reached by direct calls from the cache only */
	SAVE_ALL
	movq	F_R(%rsp), %rdi
	movq	%rcx, %rsi
	call	kjit_linux_indirect_miss
	movq	F_PRCX(%rsp), %rcx
	movq	%rcx, F_RCX(%rsp)	/* restore the program's rcx      */
	movq	%rax, F_PRCX(%rsp)	/* its slot now holds the target   */
	RESTORE_ALL
	leaq	8(%rsp), %rsp		/* drop R (lea: flags untouched)   */
	UNWIND_HINT_FUNC		/* [rsp] = the target              */
	RET
SYM_CODE_END(kjit_gate_indirect)

/* A translated call into the scheduler funnel: push R ; jmp kjit_gate_sched.
 * [rsp] = R, every other register as the funnel expects it.  The C half
 * (sched_resume.c) may put kjit_sched_return into R's slot; the funnel is
 * then entered with a RET, as by a call from that slot. */
SYM_CODE_START(kjit_gate_sched)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR		/* reached by direct calls from the cache only */		/* [rsp] = R, like a call */
	SAVE_ALL
	leaq	F_R(%rsp), %rdi		/* the slot */
	call	kjit_linux_sched_call
	RESTORE_ALL
	pushq	kjit_schedule_fn(%rip)
	UNWIND_HINT_FUNC
	RET				/* into __schedule, [rsp] = the slot */
SYM_CODE_END(kjit_gate_sched)

/* __schedule returns here for a task the gate or the sched_switch probe
 * retargeted, with preemption off: this CPU's kjit_resume_pc is R. */
SYM_CODE_START(kjit_sched_return)
	KJIT_UNWIND_HINT_NO_FRAME
	ENDBR				/* its address is data (entered by RET) */
	pushq	PER_CPU_VAR(kjit_resume_pc)
	UNWIND_HINT_FUNC		/* [rsp] = R, as if returning to it */
	SAVE_ALL
	movq	F_R(%rsp), %rdi
	call	kjit_linux_sched_resume
	movq	%rax, F_R(%rsp)		/* R's slot now holds where to go on */
	RESTORE_ALL
	RET
SYM_CODE_END(kjit_sched_return)
