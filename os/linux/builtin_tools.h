/* SPDX-License-Identifier: GPL-2.0 */
/* builtin_tools.c: the built-in tools, one table of operations per tool
 * (the plugins of plugins/, callstack.c, kcov.c and the branches tool).  Above the engine host:
 * config.c starts a tool through kjit_host_start with its init and plugin. */
#ifndef KJIT_BUILTIN_TOOLS_H
#define KJIT_BUILTIN_TOOLS_H

#include <linux/types.h>
#include <asm/current.h>
#include "callstack.h"
#include "kcov.h"
#include "uapi/kjit/ioctl.h"

struct kjit_plugin;

/* What a tool asks of the entry path beside its plugin, as bits of one
 * word: the entry policy holds the active tool's word
 * (kjit_tool_entry_hooks), and the entry path tests it inline and calls the
 * hook directly (kjit_tool_entry_filter, kjit_tool_on_entry below).  A
 * function pointer here would cost an indirect call, a retpoline thunk, on
 * every entry of the tools that have one. */
enum {
	/* entry_filter: only tasks with coverage enabled are redirected */
	KJIT_ENTRY_FILTER_KCOV_TASKS = 1u << 0,
	/* on_entry: an ENTRY event for every redirected entry */
	KJIT_ON_ENTRY_CALLSTACK = 1u << 1,
};

struct kjit_builtin_tool {
	const char *name;
	/* Allocates the tool's data from the engine's data window (called by
	 * the engine host right after the engine is created); NULL: none. */
	int (*init)(void);
	const struct kjit_plugin *(*plugin)(void);
	/* Zeroes the results in place; NULL: nothing to reset. */
	void (*reset)(void);
	/* Fills res->scalars (zeroed) and copies up to `cap` records to `u`;
	 * res->nrec = how many exist.  NULL: no results. */
	int (*results)(struct kjit_ioc_results *res, struct kjit_ioc_rec __user *u, u64 cap);
	/* Which tasks' entries are redirected: a KJIT_ENTRY_FILTER_*; 0: every task's. */
	u32 entry_filter;
	/* What runs at each redirected entry besides the plugin's on_entry: a
	 * KJIT_ON_ENTRY_*; 0: nothing. */
	u32 on_entry;
};

/* The tool with id KJIT_TOOL_* (NULL past KJIT_TOOL_MAX). */
const struct kjit_builtin_tool *kjit_builtin_tool(u32 id);
const char *kjit_tool_name(u32 id);
/* Tool id's entry_filter | on_entry: the word the entry policy holds. */
u32 kjit_tool_entry_hooks(u32 id);
/* Tool id was started (config.c): its counts are the ones read from now. */
void kjit_tool_started(u32 id);
/* The icount tool's count since its last reset, read lock-free (capture
 * records it from translated code); 0 while another tool runs. */
u64 kjit_tool_icount(void);
void kjit_builtin_tools_exit(void);

/* Whether the entry filter of `hooks` lets current's entry be redirected
 * (current is read only when a filter asks for it).  entry_trampoline.S
 * applies the same filter before any C runs. */
static __always_inline bool kjit_tool_entry_filter(u32 hooks)
{
	return !(hooks & KJIT_ENTRY_FILTER_KCOV_TASKS) || kjit_kcov_current_admitted();
}

/* The filter by task of `hooks`, as entry_table.h's bit (kept per CPU in
 * its admitted byte, which the trampoline reads itself), or 0: none. */
static __always_inline u8 kjit_tool_task_filter(u32 hooks)
{
	return (hooks & KJIT_ENTRY_FILTER_KCOV_TASKS) ? KJIT_ENTRY_ADMIT_TOOL : 0;
}

/* Whether an entry under `hooks` needs C beyond what the trampoline does
 * (its task filter): an on-entry hook. */
static __always_inline bool kjit_tool_entry_needs_c(u32 hooks)
{
	return hooks & ~KJIT_ENTRY_FILTER_KCOV_TASKS;
}

/* The on-entry hook of `hooks`, for a redirected entry to pc whose stack
 * pointer is sp (at its return address). */
static __always_inline void kjit_tool_on_entry(u32 hooks, u64 pc, u64 sp)
{
	if (hooks & KJIT_ON_ENTRY_CALLSTACK)
		kjit_callstack_entry(pc, sp);
}

#endif
