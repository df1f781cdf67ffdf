// SPDX-License-Identifier: GPL-2.0
/* The capture's register records: every GPR, rflags and the CPU where the
 * owner's invocation starts (BEGIN, and the task's stack above rsp), and
 * where it goes on after a call the replay skips (RESUME).  Each is one
 * context call: the routine reads the registers from the call's own save
 * area.  Whose invocation is recorded, and which skipped call is pending,
 * is the recorder's (capture_log.c); record layouts:
 * include/uapi/kjit/capture_format.h. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include "capture_regs.h"
#include "capture_buf.h"
#include "capture_log.h"
#include "builtin_tools.h"

/* The running CPU and its per-CPU offset: the GS base kernel code uses. */
static void cap_cpu(u64 *gs_base, u32 *cpu)
{
	preempt_disable();
	*gs_base = this_cpu_read(this_cpu_off);
	*cpu = smp_processor_id();
	preempt_enable();
}

/* The stack above rsp: the return address, the caller's frames and the
 * syscall's pt_regs. */
static void cap_copy_stack(u64 rsp)
{
	struct kjit_cap_stack *s;
	unsigned long base = (unsigned long)task_stack_page(current), top = base + THREAD_SIZE;
	unsigned long from = rsp;
	u32 n;

	if (from < base || from >= top)
		from = top;        /* not on the task stack: no copy */
	n = top - from;
	s = kjit_caplog_reserve(sizeof(*s) + n, KJIT_CAP_STACK);
	if (!s)
		return;
	s->base = base;
	s->size = THREAD_SIZE;
	s->from = from;
	memcpy(s + 1, (void *)from, n);
	kjit_capbuf_commit_event(s);
}

void kjit_cap_entry(const struct kjit_mcontext *mc)
{
	struct kjit_cap_begin *b;

	if (!kjit_caplog_claim(mc->rip, mc->gpr[KJIT_REG_RSP]))
		return;
	b = kjit_caplog_reserve(sizeof(*b), KJIT_CAP_BEGIN);
	if (!b)
		return;
	memset((u8 *)b + sizeof(b->h), 0, sizeof(*b) - sizeof(b->h));
	b->pid = task_pid_nr(current);
	memcpy(b->gpr, mc->gpr, sizeof(b->gpr));
	b->rflags = mc->rflags;
	b->entry_pc = mc->rip;
	cap_cpu(&b->gs_base, &b->cpu);
	b->icount = kjit_tool_icount();
	kjit_capbuf_commit_event(b);
	cap_copy_stack(mc->gpr[KJIT_REG_RSP]);
}

/* Written whole, and only at the skipped call's own return address. */
void kjit_cap_resumed(const struct kjit_mcontext *mc)
{
	struct kjit_caplog_skipped_call call;
	struct kjit_cap_resume *r;

	if (!kjit_caplog_take_resume(mc->rip, &call))
		return;
	r = kjit_caplog_reserve(sizeof(*r), KJIT_CAP_RESUME);
	if (!r)
		return;
	r->pc = call.pc;
	r->target = call.target;
	r->ret = call.ret;
	memcpy(r->gpr, mc->gpr, sizeof(r->gpr));
	r->rflags = mc->rflags;
	cap_cpu(&r->gs_base, &r->cpu);
	r->pad = 0;
	kjit_capbuf_commit_event(r);
}
