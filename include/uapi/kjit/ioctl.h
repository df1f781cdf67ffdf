/* SPDX-License-Identifier: GPL-2.0 */
/* /dev/kjit ioctl ABI (user space <-> kjit.ko).  Root (CAP_SYS_ADMIN) only.
 * Every struct starts with `size` (the caller's sizeof) so it can grow. */
#ifndef KJIT_UAPI_IOCTL_H
#define KJIT_UAPI_IOCTL_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#else
#include <stdint.h>
#include <sys/ioctl.h>
typedef uint32_t __u32;
typedef int32_t __s32;
typedef uint64_t __u64;
#endif

#include "capture_format.h"

#define KJIT_NAME_MAX 128

/* Attach to / detach from a kernel function with an fentry site, by symbol
 * name ([A-Za-z0-9_.], NUL-terminated).  Detach with name "*" detaches all.
 * flags KJIT_TARGET_SYSNR: attach the system call whose number is in `addr`
 * (resolved through the kernel's sys_call_table; `name` is filled in). */
#define KJIT_TARGET_SYSNR 1u
struct kjit_ioc_target {
  __u32 size;
  __u32 flags;
  char name[KJIT_NAME_MAX];
  __u64 addr;                  /* in: syscall nr (SYSNR); out: the function's address */
};

/* Attach many functions at once (one ftrace update).  names: `count`
 * NUL-padded KJIT_NAME_MAX-byte names; results: `count` __s32, 0 or -errno
 * per name (-EPERM: never instrumented (noinstr, entry, kprobes blacklist,
 * scheduler); -EINVAL: no fentry site; -EEXIST: already attached;
 * -ENOENT: no such symbol; -EAGAIN: in a module that is not live, being
 * loaded or unloaded).  Returns the number attached. */
struct kjit_ioc_attach_many {
  __u32 size;
  __u32 count;
  __u64 names;                 /* user pointer */
  __u64 results;               /* user pointer */
};

/* Engine statistics: struct kjit_engine_stats (include/kjit/engine.h) plus
 * the module's own counters. */
struct kjit_ioc_stats {
  __u32 size;
  __u32 nattached;
  /* struct kjit_engine_stats, field for field */
  __u64 blocks_built;
  __u64 insns_translated;
  __u64 fallbacks;
  __u64 direct_links;
  __u64 chain_links;
  __u64 dispatcher_exits;
  __u64 indirect_misses;
  __u64 flushes;
  __u64 cache_bytes_used;
  __u64 arena_bytes_used;
  __u64 inlined_calls;
  __u64 outlined_calls;
  /* module counters */
  __u64 entries;               /* ftrace hits redirected into the cache  */
  __u64 entry_declined;        /* engine returned the original pc        */
  __u64 entry_skipped;         /* NMI, engine lock held here, ...        */
  __u64 gate_escapes;          /* gates that returned to native code     */
  __u64 reclaims;              /* cache-epoch reclaims (flush from a work item) */
  __u64 icount;                /* built-in instruction-count tool        */
  __u64 filtered;              /* entries not redirected: pid filter     */
  __u64 exits;                 /* entry functions that returned through a gate */
  __u64 extable_mirrored;      /* user-access sites mirrored into the cache */
  __u64 extable_declined;      /* ... left at their original address      */
  __u64 extable_entries;       /* entries in the module's dynamic extable */
  __u64 cache_size;            /* code cache bytes given to the engine    */
  __u64 text_events;           /* text_poke() calls seen (any agent)      */
  __u64 text_flushes;          /* retirements for text changes (incl. modules) */
  __u32 tool;                  /* KJIT_TOOL_* */
  __u32 pid;                   /* pid filter, 0 = all */
  __u32 inline_instrumentation, use_liveness, flush_every_entry, pad;
  __u64 stop_addresses;        /* distinct entry return addresses (call sites) */
  /* How entries ended since the engine was created or results were reset
   * (enum kjit_departure, include/kjit/engine.h; os/linux/sched_resume.h).
   * Every entered invocation is completed, left for one reason, asleep now,
   * ended by its task's exit, or still running; what none of these counts
   * explains is shown as unknown by kjitctl. */
  __u64 entered;               /* entries the engine let into the cache   */
  __u64 completed;             /* ... returned from the cache             */
  __u64 left_native_call;      /* called code that is never translated    */
  __u64 left_native_insn;      /* an instruction that runs at its address */
  __u64 left_declined;         /* a block the engine could not build      */
  __u64 left_cache_full;       /* the cache was full (reclaim pending)    */
  __u64 left_sleep_full;       /* slept, not followed: sleepers table full */
  __u64 left_sleep_off;        /* slept, not followed: hook inactive      */
  __u64 sleep_lost;            /* slept, return slot changed: not followed */
  __u64 task_exits;            /* ended in the task's exit               */
  __u64 sleeps_followed;       /* sleeps that will go on in the cache     */
  __u64 sleeps_resumed;        /* ... that did                            */
  __u64 sleeping;              /* asleep now, to be followed              */
  /* Entries that called into kjit's own devices (/dev/kjit's and the kcov
   * file's open, ioctl, mmap and release, e.g. kjitctl's while its system
   * calls are attached): they leave the cache by design, before kjit
   * reconfigures itself, and are not part of the completion fraction.
   * Not included in left_native_call. */
  __u64 kjit_control;
  /* Entry paths: of `entries`, those the direct-call trampoline made
   * without calling C; the direct ops registered (0: every attachment
   * uses the IPMODIFY ftrace_ops). */
  __u64 fast_entries;
  __u64 direct_ops;
  /* Entries of an attached function that an IPMODIFY ftrace user sharing
   * it (livepatch) sent to another function: that one ran natively. */
  __u64 entry_redirected;
  /* Engine: blocks laid out after their predecessor (traces); indirect
   * targets the in-cache lookup table had no slot for; returns compiled as
   * a compare with the return address their trace's call pushed. */
  __u64 trace_fallthroughs;
  __u64 ibl_full;
  __u64 predicted_returns;
  /* Entries of an attached function called from inside kjit itself (its
   * lock, RCU, irq_work, ... while kjit runs on that CPU in that context):
   * run natively, never entered (os/linux/entry_guard.h). */
  __u64 entry_nested;
  /* Entries that left the cache at another tool's hook (a function
   * tracer, kprobe, BPF trampoline or livepatch on a function they
   * reached, a probe's jump): the hooked instruction ran natively, so the
   * tool saw the call.  Not included in left_native_call. */
  __u64 left_hooked;
  /* Every call of an attached function since the results were reset (the
   * window of `entered`): it entered the cache, or it ran natively from
   * its first instruction for one of these reasons. */
  __u64 calls_entered;         /* redirected into the cache               */
  __u64 calls_declined;        /* the engine could not build its first block */
  __u64 calls_skipped;         /* could not enter there: NMI, kjit's lock held
                                  on that CPU, the attaching task, ftrace's
                                  recursion guard */
  __u64 calls_nested;          /* called from inside kjit (entry_nested)  */
  __u64 calls_redirected;      /* an IPMODIFY user sent it elsewhere      */
  __u64 calls_filtered;        /* by design: another task than the one
                                  followed (pid filter) or the tool's
                                  filter (kcov: tasks without coverage)   */  /* Of calls_declined, why the engine sent them to their first
   * instruction (enum kjit_departure's reasons): both cache halves waited
   * for a reclaim; the first block could not be built (its text being
   * rewritten, a full exception table, ...); another tool's hook there;
   * code kjit never translates. */
  __u64 calls_declined_cache_full;
  __u64 calls_declined_unbuilt;
  __u64 calls_declined_hooked;
  __u64 calls_declined_native;
  /* Engine: text-change retirements served by a new generation of the
   * active cache half while the other waited for its reclaim. */
  __u64 generations;
  /* Entries that left the cache at the fentry site of another attached
   * function: the site's call into kjit (its direct trampoline or ftrace's
   * IPMODIFY path) runs natively and enters that function as an entry of
   * its own, and the caller goes on natively.  Classified by the site's
   * attachment when the counters are read.  Not included in
   * left_native_call or left_hooked. */
  __u64 left_nested_entry;
  /* Of text_events, the pokes within an fentry site (ftrace switching a
   * function's tracing): translations test a site's live byte, so these
   * retire nothing. */
  __u64 text_site_events;
  /* Of text_flushes, those for a module going away (or becoming live,
   * when the traces that depended on its addresses could not be told
   * apart). */
  __u64 module_flushes;
  /* The last text change that retired the cache (of text_flushes less
   * module_flushes): the address written, and the return addresses of
   * __text_poke's callers, innermost first (0 past the last found), so
   * kjitctl can name the agent (a kprobe arming, a jump label, a static
   * call...).  All 0 before the first. */
  __u64 text_flush_addr;
  __u64 text_flush_by[4];
  /* Of text_events, the pokes that retired translations on their own:
   * the traces built from the bytes written, and their blocks, with the
   * rest of the cache left as it was (text_flushes counts the others). */
  __u64 text_retires;
  __u64 traces_retired;
  __u64 blocks_retired;
};

/* Built-in tools (the example tools of plugins/, plus callstack, a
 * kernel-only call/return tracer for folded stacks, kcov and branches). */
enum kjit_tool {
  KJIT_TOOL_NONE = 0,
  KJIT_TOOL_ICOUNT = 1,
  KJIT_TOOL_BBCOUNT = 2,
  KJIT_TOOL_CALLTRACE = 3,
  KJIT_TOOL_BRANCH_HINTS = 4,
  KJIT_TOOL_LOCK_CONTENTION = 5,
  KJIT_TOOL_ENTRY_COUNT = 6,
  KJIT_TOOL_CALLSTACK = 7,
  KJIT_TOOL_BRANCHES = 8,
  KJIT_TOOL_KCOV = 9,
  KJIT_TOOL_MAX = 9,
};

/* Reconfigure: tool, engine options, cache size, modes.  Only while nothing
 * is attached and no plugin module uses kjit (-EBUSY); re-creates the engine
 * (every translation and every result is dropped).  Fields are absolute. */
struct kjit_ioc_config {
  __u32 size;
  __u32 tool;                  /* KJIT_TOOL_* */
  __u32 inline_instrumentation;/* 1 default */
  __u32 use_liveness;          /* 1 default */
  __u32 cache_kb;              /* 0 = the module parameter's size; else 16.. */
  __u32 flush_every_entry;     /* flush the cache when each entry returns */
  __u32 pid;                   /* only this thread group is redirected, 0 = all */
  __u32 max_block_insns;       /* 0 = default */
  __u32 flags;                 /* KJIT_CONFIG_* */
  /* Filters by task, all of which must match (and the pid filter): */
  __u32 tid;                   /* only this thread, 0 = any */
  __s32 cgroup_fd;             /* KJIT_CONFIG_CGROUP: an open cgroup v2
                                  directory; tasks in it or below it */
  char comm[16];               /* non-empty: only tasks with this comm
                                  (exactly, as TASK_COMM_LEN cuts it) */
  __u64 cpus[4];               /* KJIT_CONFIG_CPUS: only on these CPUs
                                  (bit N of cpus[N / 64]; CPUs 0..255) */
};
/* The pid filter also takes tasks whose parent, or an ancestor up to 16
 * generations up, belongs to thread group `pid` (a workload's children,
 * as KJIT_CAPTURE_DESCENDANTS does for a capture). */
#define KJIT_CONFIG_PID_DESCENDANTS 1u
#define KJIT_CONFIG_CGROUP 2u
#define KJIT_CONFIG_CPUS 4u
#define KJIT_CONFIG_FLAGS (KJIT_CONFIG_PID_DESCENDANTS | KJIT_CONFIG_CGROUP | KJIT_CONFIG_CPUS)
/* tid, comm, cgroup and cpus are evaluated for a task each time it is
 * switched in (a sched_switch probe), and for the task running on each CPU
 * when the configuration is made: a task that execs to another comm or
 * moves to another cgroup while it runs is re-evaluated at its next
 * switch-in.  While any of them is set, only task context is redirected
 * (interrupts run natively).  Not with a tool that filters by task itself
 * (kcov): -EINVAL. */
#define KJIT_CONFIG_CPUS_MAX 256

/* Results of the active tool.  scalars: icount [0]=count; bbcount [0]=total
 * (blocks that end in a control transfer),
 * [1]=dropped (block translations that found the per-block table full: their
 * executions are in the total only), [2]=1 when the per-block counters are
 * per-CPU (else locked adds: both exact); calltrace [0]=head, [1]=dropped (oldest
 * targets overwritten by the ring); branch_hints executed,taken,right,wrong,
 * hinted,hint_right; lock_contention attempts,failures; entry_count
 * [1]=dropped (calls whose routine found the table full); callstack
 * [0]=events written, [1]=ring capacity, [2]=dropped (oldest events
 * overwritten); branches bbcount's [0..2] and [3]=dropped branches
 * (branch translations that found the per-branch table full: not counted);
 * kcov [0]=threads with coverage enabled now.
 * Scalars a module does not fill read 0, so an older module reports no
 * drops.  Records (rec_ptr, capacity nrec; nrec out =
 * how many exist, at most capacity copied): bbcount (pc,count) per distinct
 * block, with sp = the block's bytes | its instructions << 32 and pid_type
 * = KJIT_REC_BB_FRAGMENT for a block the engine cut (its own counter, not
 * in the total); calltrace (target) oldest first; entry_count (pc,count);
 * callstack (pc, sp, count = ktime_get_mono_fast_ns() at the event,
 * pid_type = KJIT_REC_INSNS << 56 | cpu << 40 | pid << 8 | type: 1 entry,
 * 2 call, 3 return; insns = the CPU's count of instructions run in
 * translated code, valid with KJIT_REC_INSNS; switches = the thread's
 * context switches (nvcsw + nivcsw)) oldest first; branches: bbcount's block records, then one per
 * conditional branch with pc = the branch, count = times taken, sp =
 * times not taken, pid_type = KJIT_REC_BRANCH | (u32)(target - pc) << 32
 * (the target as a signed 32-bit distance from the branch). */
struct kjit_ioc_rec {
  __u64 pc, count, sp, pid_type;   /* pid_type = pid << 8 | type */
  __u64 insns, switches;           /* callstack only (0 for other tools) */
};
#define KJIT_REC_BB_FRAGMENT 1u
#define KJIT_REC_BRANCH 2u
#define KJIT_REC_INSNS 1u          /* callstack: insns holds a count (<< 56) */
struct kjit_ioc_results {
  __u32 size;
  __u32 tool;                  /* out */
  __u64 scalars[8];
  __u64 nrec;                  /* in: capacity; out: available */
  __u64 rec_ptr;               /* user pointer to struct kjit_ioc_rec[] */
};

#define KJIT_IOC_MAGIC 0xb7
#define KJIT_IOC_ATTACH _IOWR(KJIT_IOC_MAGIC, 1, struct kjit_ioc_target)
#define KJIT_IOC_DETACH _IOW(KJIT_IOC_MAGIC, 2, struct kjit_ioc_target)
#define KJIT_IOC_STATS _IOWR(KJIT_IOC_MAGIC, 3, struct kjit_ioc_stats)
#define KJIT_IOC_FLUSH _IO(KJIT_IOC_MAGIC, 4)
/* Zeroes the active tool's results in place (every tool). */
#define KJIT_IOC_RESET_RESULTS _IO(KJIT_IOC_MAGIC, 5)
#define KJIT_IOC_CONFIG _IOW(KJIT_IOC_MAGIC, 6, struct kjit_ioc_config)
#define KJIT_IOC_RESULTS _IOWR(KJIT_IOC_MAGIC, 7, struct kjit_ioc_results)
#define KJIT_IOC_ATTACH_MANY _IOW(KJIT_IOC_MAGIC, 8, struct kjit_ioc_attach_many)
#define KJIT_IOC_LIST _IOWR(KJIT_IOC_MAGIC, 9, struct kjit_ioc_results) /* recs: (addr) */
/* Where entries left the cache (and completed): recs (pc = native target,
 * count, pid_type = enum kjit_departure), per site the engine counted. */
#define KJIT_IOC_DEPARTURES _IOWR(KJIT_IOC_MAGIC, 10, struct kjit_ioc_results)

/* The version handshake: kjitctl asks first, and names both versions when
 * the ABI differs (an older module answers -ENOTTY).  KJIT_ABI_VERSION
 * changes with every incompatible change of this file. */
#define KJIT_ABI_VERSION 9u
#define KJIT_VERSION "0.2.0"   /* kjit.ko and kjitctl, built from one tree */
struct kjit_ioc_version {
  __u32 size;
  __u32 abi;                   /* out: the module's KJIT_ABI_VERSION */
  char version[32];            /* out: the module's version string */
  __u64 kaslr_offset;          /* out: how far KASLR moved the kernel image
                                  (kernel/kcov.c's kaslr_offset()): a
                                  run-time vmlinux address minus it is the
                                  link-time (canonical) one */
};
#define KJIT_IOC_VERSION _IOWR(KJIT_IOC_MAGIC, 11, struct kjit_ioc_version)
/* Makes this open file a session: when it is closed (also by the death of
 * its process), everything attached is detached, so a killed
 * `kjitctl record` leaves nothing behind.  Other opens are unaffected. */
#define KJIT_IOC_SESSION _IO(KJIT_IOC_MAGIC, 12)
/* What KJIT_IOC_ATTACH_MANY would answer for each name (0, -EEXIST when
 * attached, or why kjit refuses it), attaching nothing; up to 131072
 * names. */
#define KJIT_IOC_CHECK_MANY _IOW(KJIT_IOC_MAGIC, 13, struct kjit_ioc_attach_many)


/* Capture (os/linux/capture/): record invocations of an attached function
 * for deterministic replay in the simulator (kjitctl capture, docs/capture-
 * format.md).  START arms one capture (it replaces the previous one and its
 * buffers); READ copies the event and code buffers out; STOP disarms.
 * Event and code records are struct kjit_cap_rec headers followed by their
 * payload (layouts in capture_format.h), each record a multiple of 8 bytes. */
struct kjit_ioc_capture {
  __u32 size;
  __u32 flags;                 /* KJIT_CAPTURE_*; other bits: -EINVAL */
  char name[KJIT_NAME_MAX];    /* an attached function, e.g. __x64_sys_read */
  __u32 pid;                   /* thread group to capture, 0 = any */
  __u32 count;                 /* invocations to record, 1..1024 */
  __u32 buf_kb;                /* event buffer, 0 = 4096 KiB, max 65536 */
  __u32 code_kb;               /* code buffer, 0 = 1024 KiB, max 16384 */
};
/* The targets are every function attached when the capture is armed (name
 * and count are ignored): each is recorded until one invocation of it is
 * complete (END RETURNED, or SLEPT with its RESUME records), or after 4
 * that were not (a call that never returns, such as exit_group); the
 * capture is done when every target is. */
#define KJIT_CAPTURE_EACH_ATTACHED 1u
/* The pid filter also takes tasks whose parent, or an ancestor up to 16
 * generations up, belongs to thread group `pid` (a workload's children). */
#define KJIT_CAPTURE_DESCENDANTS 2u
#define KJIT_CAPTURE_FLAGS (KJIT_CAPTURE_EACH_ATTACHED | KJIT_CAPTURE_DESCENDANTS)
struct kjit_ioc_capture_read {
  __u32 size;
  __u32 state;                 /* out: KJIT_CAP_STATE_* */
  __u32 ncaptured;             /* out: invocations ended (any reason) */
  __u32 flags;                 /* out: KJIT_CAP_F_* */
  __u64 event_bytes;           /* out: bytes of events recorded */
  __u64 code_bytes;            /* out: bytes of code records */
  __u64 buf_ptr, buf_len;      /* in: user buffer for events */
  __u64 code_ptr, code_len;    /* in: user buffer for code records */
};
enum { KJIT_CAP_STATE_IDLE = 0, KJIT_CAP_STATE_ARMED = 1, KJIT_CAP_STATE_DONE = 2 };
/* flags: KJIT_CAP_F_*; the records and their flags: capture_format.h. */
#define KJIT_IOC_CAPTURE_START _IOW(KJIT_IOC_MAGIC, 0x20, struct kjit_ioc_capture)
#define KJIT_IOC_CAPTURE_STOP _IO(KJIT_IOC_MAGIC, 0x21)
#define KJIT_IOC_CAPTURE_READ _IOWR(KJIT_IOC_MAGIC, 0x22, struct kjit_ioc_capture_read)

#endif
