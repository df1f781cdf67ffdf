/* SPDX-License-Identifier: GPL-2.0 */
/* engine_host.c: the engine's one owner.  Middle layer: everything that
 * creates, destroys or flushes the engine, or adds or removes a plugin,
 * goes through here, under one mutex (the host lock).  Callers above:
 * config.c (re-creation), reclaim_work.c, exit_gates.c (flush on exit),
 * textwatch.c (text changes), capture.c (its plugin), module.c. */
#ifndef KJIT_ENGINE_HOST_H
#define KJIT_ENGINE_HOST_H

#include <linux/types.h>
#include "kjit/os_shim.h"

struct kjit_plugin;
struct kjit_engine_options;

/* Memory and gates every engine of this module's lifetime gets; no engine
 * runs yet.  gate_sched may be NULL (sleeps are then not followed). */
int kjit_host_init(const struct kjit_os_memory *mem, void (*gate_direct)(void),
		   void (*gate_indirect)(void), void (*gate_sched)(void));
void kjit_host_exit(void);

/* (Re-)creates the engine: the previous one, if any, is destroyed first.
 * Caller guarantees that no task runs in the cache (nothing attached, cache
 * quiesced).  `tool_init` allocates the built-in tool's data from the new
 * engine's data window, then `tool_plugin` is registered (both may be
 * NULL).  cache_bytes 0 is the whole cache.  -EBUSY, with the running
 * engine untouched, while a plugin added by kjit_host_add_plugin is still
 * registered (it would be dropped silently).  On any other failure no
 * engine runs. */
int kjit_host_start(const struct kjit_engine_options *opt, u64 cache_bytes,
		    int (*tool_init)(void), const struct kjit_plugin *tool_plugin);
void kjit_host_stop(void);

/* Flush the code cache from process context.  wait = false gives up with
 * -EBUSY when the host lock is taken (callers on a hot path). */
int kjit_host_flush(bool wait);
/* After a full cache half moved translation to the other half: waits until
 * nobody runs in the retired half and frees it (process context).  Unlike a
 * flush it keeps the active half and its translations. */
int kjit_host_reclaim(void);
/* Retires every translation now, in any context but NMI, without the host
 * lock (kjit_engine_retire, and the trampoline's stored translations):
 * true when there were translations to retire (then a reclaim is due).
 * False, doing nothing, while no engine runs or one is being re-created. */
bool kjit_host_retire(void);
/* Retires only the translations built from [addr, addr + len)
 * (kjit_engine_retire_range), in the same contexts: how many traces, 0
 * while no engine runs, or -1 when the engine cannot tell them apart (the
 * caller then retires everything). */
int kjit_host_retire_range(unsigned long addr, unsigned long len);

/* Plugins other than the built-in tool (capture).  While one is added,
 * kjit_host_start refuses: remove it first. */
int kjit_host_add_plugin(const struct kjit_plugin *p);
int kjit_host_remove_plugin(const struct kjit_plugin *p);
/* Whether one is registered now (a hint for callers that explain a
 * refusal; kjit_host_start decides under the host lock). */
bool kjit_host_plugins_added(void);

u64 kjit_host_cache_limit(void);   /* bytes of the whole code cache */
u64 kjit_host_cache_size(void);    /* bytes the running engine was given */

#endif
