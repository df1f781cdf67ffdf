/* SPDX-License-Identifier: GPL-2.0 */
/* entry_decide.c: what happens at an attached function's entry, on either
 * path: the IPMODIFY ftrace_ops' handler and the direct trampoline's C path
 * (kjit_direct_slow, called from entry_trampoline.S).  Below the attach
 * layer, which registers the handler; above the entry policy. */
#ifndef KJIT_ENTRY_DECIDE_H
#define KJIT_ENTRY_DECIDE_H

#include <linux/types.h>

struct ftrace_ops;
struct ftrace_regs;

/* The IPMODIFY ftrace_ops' func (entry_attach.c registers the ops). */
void kjit_ftrace_handler(unsigned long ip, unsigned long parent_ip,
			 struct ftrace_ops *ops, struct ftrace_regs *fregs);
/* The handler ignores entries to ip: the ops' parking address (set once,
 * at init, before the ops is registered). */
void kjit_entry_set_park_ip(unsigned long ip);

#endif
