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
typedef uint64_t __u64;
#endif

#define KJIT_NAME_MAX 128

/* Attach to / detach from a kernel function with an fentry site, by symbol
 * name ([A-Za-z0-9_.], NUL-terminated).  Detach with name "*" detaches all. */
struct kjit_ioc_target {
  __u32 size;
  __u32 flags;                 /* must be 0 */
  char name[KJIT_NAME_MAX];
  __u64 addr;                  /* out: the function's address */
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
};

#define KJIT_IOC_MAGIC 0xb7
#define KJIT_IOC_ATTACH _IOWR(KJIT_IOC_MAGIC, 1, struct kjit_ioc_target)
#define KJIT_IOC_DETACH _IOW(KJIT_IOC_MAGIC, 2, struct kjit_ioc_target)
#define KJIT_IOC_STATS _IOWR(KJIT_IOC_MAGIC, 3, struct kjit_ioc_stats)
#define KJIT_IOC_FLUSH _IO(KJIT_IOC_MAGIC, 4)
#define KJIT_IOC_ICOUNT_RESET _IO(KJIT_IOC_MAGIC, 5)

#endif
