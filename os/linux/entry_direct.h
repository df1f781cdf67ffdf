/* SPDX-License-Identifier: GPL-2.0 */
/* entry_direct.c: entry by a direct call.  Attached functions' fentry sites
 * call kjit_direct_tramp (entry_trampoline.S) through ftrace direct ops
 * (kjit_register_ftrace_direct, compat.h), one ops per attach request.  Called by
 * entry_attach.c under its attach mutex. */
#ifndef KJIT_ENTRY_DIRECT_H
#define KJIT_ENTRY_DIRECT_H

#include <linux/types.h>

/* tramp: the trampoline's address (module.c passes it: asm sits above). */
int kjit_direct_init(unsigned long tramp);
void kjit_direct_exit(void);
/* Attaches ips[0..n) (function addresses) all or none: 0, -EBUSY (another
 * direct user, such as a BPF trampoline, owns one: the caller falls back to
 * the IPMODIFY ops), -ENOSPC or another -errno. */
int kjit_direct_attach(const unsigned long *ips, unsigned int n);
/* Gives up the registered ops holding ip (a function address), attached
 * or parked, so that another direct user can have ip: `take` first gets
 * the ops' attached functions (it must enter them another way before this
 * returns), then the ops is unregistered (waits for RCU-tasks).  0,
 * -ENOENT when no ops holds ip, or take's error (the ops stays). */
int kjit_direct_release(unsigned long ip, int (*take)(unsigned long *ips, unsigned int n));
/* From now on the trampoline sends ip's entries to the original code.  Its
 * ops stays registered: true when that ops has no attached function left,
 * which kjit_direct_reap would then unregister. */
bool kjit_direct_detach(unsigned long ip);
/* Detaches every function the same way; true if an ops emptied. */
bool kjit_direct_park_all(void);
/* Unregisters the ops that have no attached function (waits for RCU-tasks). */
void kjit_direct_reap(void);
/* Unregisters every ops (unload). */
void kjit_direct_detach_all(void);
/* Registered ops; may be read without the attach mutex. */
unsigned int kjit_direct_nops(void);

#endif
