/* Internal interfaces between the C files of kjit.ko (kernel C only). */
#ifndef KJIT_LINUX_H
#define KJIT_LINUX_H

#include <linux/types.h>
#include "kjit/os_shim.h"

/* kallsyms.c: kallsyms_lookup_name reached through a kprobe. */
int kjit_kallsyms_init(void);
unsigned long kjit_ksym(const char *name);

/* shim.c: kernel facts and the symbol-derived ranges may_translate needs. */
int kjit_shim_init(void);
void kjit_shim_fill_facts(struct kjit_os_kernel_facts *facts);
/* Capture: translate memcpy/memset & co. instead of calling them natively,
 * so their reads are recorded.  Takes effect at the next flush. */
void kjit_shim_translate_leaves(bool on);
/* True when this CPU holds the engine lock (the ftrace handler must not
 * enter the engine then). */
bool kjit_os_lock_held_here(void);

/* cache_mem.c: code cache (module text, RO+X) + its RW alias, data window,
 * arena. */
int kjit_mem_init(struct kjit_os_memory *mem);
void kjit_mem_exit(void);
int kjit_mem_selftest(void);
int kjit_mem_is_cache(unsigned long addr);
void kjit_mem_cache_range(unsigned long *lo, unsigned long *hi);

/* quiesce.c: wait until no task can run or return into [lo, hi) of the
 * cache (RCU-tasks plus stack checks of every task).  May sleep long. */
int kjit_quiesce_init(void);
void kjit_quiesce_range(unsigned long lo, unsigned long hi);

/* dispatch_gates.S */
void kjit_gate_direct(void);
void kjit_gate_indirect(void);

/* entry_ftrace.c */
int kjit_entry_init(void);
void kjit_entry_exit(void);
int kjit_attach(const char *name, u64 *addr_out);
int kjit_attach_many(const char __user *names, s32 __user *results, u32 count);
int kjit_detach(const char *name);     /* "*" = all */
void kjit_detach_all(void);
void kjit_entry_quiesce(void);
int kjit_nattached(void);
bool kjit_attachment(int i, char *name, u64 *addr);
int kjit_syscall_name(u64 nr, char *name, size_t len);
struct kjit_entry_counters {
  u64 entries, entry_declined, entry_skipped, gate_escapes, reclaims, filtered, exits;
};
void kjit_entry_counters(struct kjit_entry_counters *out);

/* control.c */
int kjit_control_init(void);
void kjit_control_exit(void);
int kjit_valid_name(const char *name, size_t max);

/* extable.c: the module's dynamic exception table (cache sites). */
int kjit_extable_init(void);
void kjit_extable_exit(void);
void kjit_extable_reset(void);
void kjit_extable_code_written(unsigned long addr, unsigned long len);
void kjit_extable_retire(unsigned long lo, unsigned long hi);   /* engine lock held */
void kjit_extable_stats(u64 *mirrored, u64 *declined, u64 *entries);

/* tools.c: engine lifetime, built-in tools, configuration, results. */
struct kjit_plugin;
struct kjit_ioc_config;
struct kjit_ioc_results;
struct kjit_tool_state {
  u32 id, pid, flush_every_entry;
  u64 cache_size;
};
extern struct kjit_tool_state kjit_tool;
int kjit_tools_init(const struct kjit_os_memory *mem);
void kjit_tools_exit(void);
int kjit_tools_configure(const struct kjit_ioc_config *c);
void kjit_tools_get_config(struct kjit_ioc_config *c);
void kjit_tools_reset(void);
int kjit_tools_results(struct kjit_ioc_results *res);
int kjit_tools_flush(bool wait);
u64 kjit_tools_icount(void);
const char *kjit_tool_name(u32 t);

/* textwatch.c: flush on static key / static call / module text changes. */
int kjit_textwatch_init(void);
void kjit_textwatch_exit(void);
void kjit_textwatch_stats(u64 *events, u64 *flushes);

/* callstack.c: call/return events for folded stacks. */
enum { KJIT_CS_ENTRY = 1, KJIT_CS_CALL = 2, KJIT_CS_RET = 3 };
struct kjit_cs_event { u64 pc, sp; u32 pid, type; u64 pad; };
int kjit_callstack_init(u32 capacity_pow2);
void kjit_callstack_reset(void);
void kjit_callstack_free(void);
void kjit_callstack_entry(u64 pc, u64 sp);
const struct kjit_plugin *kjit_callstack_plugin(void);
const struct kjit_cs_event *kjit_callstack_ring(u64 *head, u64 *cap);

#endif
