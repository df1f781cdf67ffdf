/* SPDX-License-Identifier: GPL-2.0 */
/* entry_attach.c: attaching and detaching functions (a direct call where
 * possible, else the IPMODIFY ftrace_ops), and the entry layer's init and
 * exit.  Above the entry decision; called by config.c, capture.c,
 * control.c, direct_yield.c and module.c. */
#ifndef KJIT_ENTRY_ATTACH_H
#define KJIT_ENTRY_ATTACH_H

#include <linux/types.h>
#include <linux/compiler_types.h>

/* direct_tramp: entry_trampoline.S's kjit_direct_tramp (module.c passes it). */
int kjit_entry_init(void (*direct_tramp)(void));
void kjit_entry_exit(void);
int kjit_attach(const char *name, u64 *addr_out);
int kjit_attach_many(const char __user *names, s32 __user *results, u32 count);
int kjit_detach(const char *name);     /* "*" = all */
struct module;
/* Detaches every function in mod's text (it is going); how many. */
int kjit_detach_module(struct module *mod);
int kjit_nattached(void);
bool kjit_attachment(int i, char *name, u64 *addr);
/* Waits until no task can be in the code cache (nothing attached) or can
 * be there only through a new entry. */
void kjit_entry_quiesce(void);

/* Another direct-call user (a BPF trampoline, direct_yield.c) is about to
 * take the function at func: if a direct ops of kjit holds it, that ops'
 * attached functions move to the IPMODIFY ops and the ops goes.  1 when
 * the IPMODIFY ops enters func (the user must share it), 0 when kjit does
 * not hold it, or -errno (a direct ops still holds it).  Sleeps. */
int kjit_entry_yield_direct(unsigned long func);

/* Whether the function whose fentry site is `site` is attached now. */
bool kjit_entry_attached_site(unsigned long site);

/* What attaching each name would answer (0 or -errno, as attach_many),
 * attaching nothing. */
int kjit_check_many(const char __user *names, s32 __user *results, u32 count);

#endif
