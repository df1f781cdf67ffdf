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
/* True when this CPU holds the engine lock (the ftrace handler must not
 * enter the engine then). */
bool kjit_os_lock_held_here(void);

/* cache_mem.c: code cache (module text, RO+X) + its RW alias, data window,
 * arena. */
int kjit_mem_init(struct kjit_os_memory *mem);
void kjit_mem_exit(void);
int kjit_mem_selftest(void);
int kjit_mem_is_cache(unsigned long addr);

/* dispatch_gates.S */
void kjit_gate_direct(void);
void kjit_gate_indirect(void);

/* entry_ftrace.c */
int kjit_entry_init(void);
void kjit_entry_exit(void);
int kjit_attach(const char *name, u64 *addr_out);
int kjit_detach(const char *name);     /* "*" = all */
void kjit_detach_all(void);
int kjit_nattached(void);
struct kjit_entry_counters {
  u64 entries, entry_declined, entry_skipped, gate_escapes, reclaims;
};
void kjit_entry_counters(struct kjit_entry_counters *out);

/* icount.c: the built-in instruction-count tool. */
int kjit_icount_init(void);
void kjit_icount_exit(void);
u64 kjit_icount_read(void);
void kjit_icount_reset(void);

/* control.c: /dev/kjit */
int kjit_control_init(void);
void kjit_control_exit(void);

#endif
