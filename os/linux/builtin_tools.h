/* builtin_tools.c: the built-in tools, one table of operations per tool
 * (the six plugins of plugins/ plus callstack.c).  Above the engine host:
 * config.c starts a tool through kjit_host_start with its init and plugin. */
#ifndef KJIT_BUILTIN_TOOLS_H
#define KJIT_BUILTIN_TOOLS_H

#include <linux/types.h>
#include "uapi/kjit/ioctl.h"

struct kjit_plugin;

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
};

/* The tool with id KJIT_TOOL_* (NULL past KJIT_TOOL_MAX). */
const struct kjit_builtin_tool *kjit_builtin_tool(u32 id);
const char *kjit_tool_name(u32 id);
/* The icount tool's count since its last reset, read lock-free (capture
 * records it from translated code); 0 when `id` is another tool. */
u64 kjit_builtin_icount(u32 id);
void kjit_builtin_tools_exit(void);

#endif
