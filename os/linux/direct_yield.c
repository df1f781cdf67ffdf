// SPDX-License-Identifier: GPL-2.0
/* A BPF trampoline gets the functions kjit enters by a direct call.
 *
 * ftrace gives a function one direct call: a BPF fentry/fexit program
 * attached after kjit to a function one of kjit's direct ops holds would be
 * refused (-EBUSY).  But BPF shares a function with an IPMODIFY ftrace_ops
 * (livepatch's kind, and kjit's other way in, entry_attach.c): it calls
 * what the IPMODIFY handler chose (BPF_TRAMP_F_SHARE_IPMODIFY).  So kjit
 * hands the function over before BPF asks ftrace for it: an IPMODIFY ops
 * on bpf_trampoline_link_prog, the one way a tracing program reaches its
 * target's trampoline, sends each call to link_wrapper, which gives up the
 * direct ops holding the target (kjit_entry_yield_direct: its functions
 * move to the IPMODIFY ops with their counts exact), marks the trampoline
 * as sharing its function with an IPMODIFY ops when kjit's enters it, and
 * then runs bpf_trampoline_link_prog's body.
 *
 * The body is called past its fentry site, as a BPF trampoline calls its
 * function: the other ftrace users of bpf_trampoline_link_prog saw this call
 * at the site already.  A direct user other than BPF (an ftrace-direct
 * module) is still refused; kjit.ko's direct_entry=0 leaves it every
 * function.
 *
 * Unload: a task may sleep in the wrapper (kjit's mutex, then the body's
 * tr->mutex); callers counts those redirected and not yet out.  Exit
 * unregisters the ops (ftrace waits for the handler), waits until callers
 * is 0, then until no task is in the wrapper's last instructions. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/bpf.h>
#include <linux/delay.h>
#include <linux/ftrace.h>
#include "direct_yield.h"
#include "entry_attach.h"
#include "fentry.h"
#include "ksym_call.h"
#include "quiesce.h"
#include "symbols.h"

#if defined(CONFIG_BPF_JIT) && defined(CONFIG_BPF_SYSCALL) && defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS)

/* bpf_trampoline_link_prog's arguments in their registers: kernels with
 * the two-argument form ignore the third. */
typedef int (*link_fn)(void *link, struct bpf_trampoline *tr, void *tgt_prog);

static link_fn link_body;        /* past the fentry site, through a ksym stub */
static struct ftrace_ops link_ops;
static bool link_ops_on;
static atomic_t callers;
static unsigned long wrapper_size;

static noinline int link_wrapper(void *link, struct bpf_trampoline *tr, void *tgt_prog)
{
	int ret;

	if (tr && tr->func.addr && kjit_entry_yield_direct((unsigned long)tr->func.addr) > 0) {
		/* What ftrace's ENABLE_SHARE_IPMODIFY_PEER does when an IPMODIFY
		 * ops comes after BPF: the trampoline is built to call what
		 * the IPMODIFY handler chose from the start, so ftrace never
		 * asks it to rebuild (ENABLE_SHARE_IPMODIFY_SELF, -EAGAIN).
		 * Some kernels' bpf_trampoline_update mishandle that -EAGAIN
		 * when a program is added to a trampoline already registered
		 * (6.1.0-57: it clears the live ops' func, ftrace warns, the
		 * trampoline cannot be unregistered and calls a freed program). */
		mutex_lock(&tr->mutex);
		tr->flags |= BPF_TRAMP_F_SHARE_IPMODIFY;
		mutex_unlock(&tr->mutex);
	}
	ret = link_body(link, tr, tgt_prog);
	atomic_dec(&callers);
	return ret;
}

static void link_handler(unsigned long ip, unsigned long parent_ip,
			 struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	if (!regs)
		return;
	atomic_inc(&callers);
	regs->ip = (unsigned long)link_wrapper;
}

int kjit_direct_yield_init(void)
{
	unsigned long func = kjit_ksym("bpf_trampoline_link_prog");
	unsigned long site = func ? kjit_fentry_site(func) : 0, offset;
	int (*size_of)(unsigned long addr, unsigned long *size, unsigned long *offset);
	int ret;

	if (!site) {
		pr_info("no traceable bpf_trampoline_link_prog: a BPF program is refused a function kjit enters by a direct call\n");
		return 0;
	}
	link_body = kjit_ksym_callable(site + MCOUNT_INSN_SIZE);
	size_of = kjit_ksym_fn("kallsyms_lookup_size_offset");
	if (!link_body || !size_of ||
	    !size_of((unsigned long)link_wrapper, &wrapper_size, &offset) || !wrapper_size)
		return -EFAULT;
	link_ops.func = link_handler;
	link_ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY;
	ret = ftrace_set_filter_ip(&link_ops, site, 0, 0);
	if (!ret)
		ret = register_ftrace_function(&link_ops);
	if (ret) {
		/* another IPMODIFY user (a livepatch of it) holds the function */
		ftrace_free_filter(&link_ops);
		pr_warn("bpf_trampoline_link_prog not hooked (%d): a BPF program is refused a function kjit enters by a direct call\n",
			ret);
		return 0;
	}
	link_ops_on = true;
	return 0;
}

void kjit_direct_yield_exit(void)
{
	if (!link_ops_on)
		return;
	unregister_ftrace_function(&link_ops);
	ftrace_free_filter(&link_ops);
	link_ops_on = false;
	while (atomic_read(&callers))
		msleep(20);
	/* from atomic_dec to the return: a few instructions, maybe preempted */
	kjit_quiesce_range((unsigned long)link_wrapper, (unsigned long)link_wrapper + wrapper_size);
}

#else

int kjit_direct_yield_init(void)
{
	return 0;
}

void kjit_direct_yield_exit(void)
{
}

#endif
