/* SPDX-License-Identifier: GPL-2.0 */
/* shim.c: the OS shim the engine calls (include/kjit/os_shim.h), and the
 * kernel facts and symbol-derived ranges it needs.  Bottom layer: it calls
 * only symbols, extable and quiesce. */
#ifndef KJIT_SHIM_H
#define KJIT_SHIM_H

#include <linux/types.h>
#include "kjit/os_shim.h"

int kjit_shim_init(void);
/* Every fact but the gates (those belong to the entry layer: engine_host
 * gets them from module.c). */
void kjit_shim_fill_facts(struct kjit_os_kernel_facts *facts);
/* The return thunks kjit treats as returns (kjit_os_kernel_facts). */
void kjit_shim_return_thunks(u64 out[KJIT_RETURN_THUNKS]);
/* The thunk the kernel sends returns to (x86_return_thunk), or
 * __x86_return_thunk where the kernel has no such variable. */
unsigned long kjit_chosen_return_thunk(void);
/* Capture: translate memcpy/memset & co. instead of calling them natively,
 * so their reads are recorded.  Takes effect at the next flush. */
void kjit_shim_translate_leaves(bool on);
/* Whether the cache calls `target` natively even while capturing (softirq
 * processing): a capture logs the registers after it returns. */
bool kjit_shim_is_native_call(u64 target);
/* One of kjit's own functions that translated code may call (a tracepoint
 * probe of its own, which returns and never sleeps): called natively and
 * returning into the cache, as the kernel's native calls. */
void kjit_shim_add_native_call(unsigned long addr);
/* True when this CPU holds the engine lock (the ftrace handler must not
 * enter the engine then). */
bool kjit_os_lock_held_here(void);
/* The state (MODULE_STATE_*) of the module whose text holds addr, or -1
 * when no module's does (core kernel text, or no text at all). */
int kjit_shim_module_state(unsigned long addr);

#endif
