/* entry_ftrace.c: entry redirection (ftrace), the attachments, the exits
 * through the dispatch gates and the reclaim work.  Above the engine host;
 * called by config.c, capture.c, control.c and module.c. */
#ifndef KJIT_ENTRY_FTRACE_H
#define KJIT_ENTRY_FTRACE_H

#include <linux/types.h>
#include <linux/compiler_types.h>

/* direct_tramp: entry_trampoline.S's kjit_direct_tramp (module.c passes it). */
int kjit_entry_init(void (*direct_tramp)(void));
void kjit_entry_exit(void);
int kjit_attach(const char *name, u64 *addr_out);
int kjit_attach_many(const char __user *names, s32 __user *results, u32 count);
int kjit_detach(const char *name);     /* "*" = all */
int kjit_nattached(void);
bool kjit_attachment(int i, char *name, u64 *addr);
/* Waits until no task can be in the code cache (nothing attached) or can
 * be there only through a new entry. */
void kjit_entry_quiesce(void);

/* What the ftrace handler and the gates apply to each entry and exit: only
 * thread group `pid` is redirected (0: all), the cache is flushed when an
 * entry returns (flush_every_entry), the callstack tool gets entry events. */
/* What attaching each name would answer (0 or -errno, as attach_many),
 * attaching nothing. */
int kjit_check_many(const char __user *names, s32 __user *results, u32 count);
void kjit_entry_set_policy(u32 pid, bool descendants, u32 flush_every_entry, bool callstack,
			   bool kcov_only);

/* Asks for a reclaim if the engine wants one; any context (the gates, the
 * scheduler stub): the flush itself runs from a work item. */
void kjit_entry_kick_reclaim(void);

struct kjit_entry_counters {
	u64 entries, entry_declined, entry_skipped, gate_escapes, reclaims, filtered, exits;
	u64 fast_entries;        /* of entries: made by the trampoline without C */
	u32 direct_ops;          /* direct ops registered */
	u64 redirected;          /* direct entries another ftrace user sent elsewhere */
	u64 nested;              /* entries declined: nested in kjit (entry_guard.h) */
};
/* The trampoline's entries, which the engine's departure counts do not
 * hold, since the results were last reset (kjit_entry_reset_counts). */
void kjit_entry_reset_counts(void);
u64 kjit_entry_fast_since_reset(void);
void kjit_entry_counters(struct kjit_entry_counters *out);

#endif
