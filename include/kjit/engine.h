/* SPDX-License-Identifier: GPL-2.0 */
/* The engine as its hosts see it (C ABI).
 *
 * Protocol between translated code and a host dispatcher:
 *
 *  - A direct exit that is not linked yet is a stub
 *        call  gate_direct ; .long exit_id
 *    so at the gate [rsp] is the stub's return address R, and the exit id is
 *    the 4 bytes at R.  The host pops R, calls kjit_engine_direct_exit(R),
 *    and jumps to the address it returns with every register as it was at
 *    the stub.
 *
 *  - An indirect transfer (ret, jmp *x, call *x) runs a predicated chain
 *    whose state is: rcx = original target, [rsp] = the program's rcx.  On a
 *    miss the chain ends in
 *        call  gate_indirect ; .long chain_id
 *    The host pops R, calls kjit_engine_indirect_miss(R, rcx), then restores
 *    rcx from [rsp], pops that slot, and jumps to the returned address.
 *
 * A returned address is either a code-cache address (exec view) or an
 * original address (the engine declined: the escape hatch to native code);
 * kjit_engine_is_cache_address() tells which.  Translated code also leaves
 * the cache without a gate: links to native targets (stop addresses,
 * untranslatable code) are plain jumps, so a host cannot observe every exit.
 * A stub the engine does not know (a host bug) yields 0.  Translated code never leaves
 * code-cache addresses on the stack: calls push original return addresses. */
#ifndef KJIT_ENGINE_H
#define KJIT_ENGINE_H

#include "kjit/os_shim.h"
#include "kjit/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kjit_engine_options {
  uint32_t inline_instrumentation; /* 1: inline small routines (default)       */
  uint32_t use_liveness;           /* 1: save only live flags/regs (default)   */
  uint32_t max_chain_length;       /* predicated links per indirect site (4)   */
  uint32_t max_block_insns;        /* instructions per dynamic block (64)      */
  /* 1: returns to stop addresses always reach the gate, so the host sees
   * every exit; 0 (default): they are chained straight to native code, a
   * compare instead of a dispatcher trip.  Exits are also observed while a
   * registered plugin has on_exit. */
  uint32_t observe_exits;
  /* Blocks laid out one after the other when each ends in a jump to the
   * next that is not built yet (a trace, falling through instead of
   * jumping): 8 by default, 0 or 1 every block on its own. */
  uint32_t max_trace_blocks;
  /* 1 (default): the `ret` of a compiled C function (kjit_os_c_abi_return)
   * compares its return address with `cmp`, and instrumentation before it
   * may use KJIT_C_RETURN_DEAD_REGS and the arithmetic flags, which its
   * callers do not read after it; 0: every return keeps every register and
   * flag. */
  uint32_t abi_returns;
};

/* What a compiled C function's caller cannot read after it returns, by the
 * SysV ABI: the scratch registers but the two that return values (rax,
 * rdx).  With abi_returns a translation may leave them changed there, as it
 * may the arithmetic flags (kjit-sim's comparisons allow it). */
#define KJIT_C_RETURN_DEAD_REGS                                                                  \
  ((1u << KJIT_REG_RCX) | (1u << KJIT_REG_RSI) | (1u << KJIT_REG_RDI) | (1u << KJIT_REG_R8) | \
   (1u << KJIT_REG_R9) | (1u << KJIT_REG_R10) | (1u << KJIT_REG_R11))
void kjit_engine_default_options(struct kjit_engine_options *opt);

/* Creates the (single) engine over host memory.  0 or a negative errno. */
int kjit_engine_init(const struct kjit_os_memory *mem, const struct kjit_os_kernel_facts *facts,
                     const struct kjit_engine_options *opt);
void kjit_engine_fini(void);

/* Entry: translation of `orig_pc`, built if needed.  Returns the original pc
 * itself when it cannot be translated.  The engine lock is a spinlock taken
 * with interrupts off in the kernel: never call the engine from NMI. */
uint64_t kjit_engine_enter(uint64_t orig_pc);
/* A task that was in the cache goes on at `orig_pc` (a return address,
 * after a sleep the host followed): its translation, built if needed, or
 * `orig_pc` itself with the departure counted.  Not an entry. */
uint64_t kjit_engine_resume(uint64_t orig_pc);
uint64_t kjit_engine_direct_exit(uint64_t stub_return_address);
uint64_t kjit_engine_indirect_miss(uint64_t stub_return_address, uint64_t target);
int kjit_engine_is_cache_address(uint64_t addr);
/* The executable range [lo, hi) of epoch `i` (0 or 1), the cache half in
 * which everything it translates is bump-allocated; 0 when the engine is
 * not initialised or `i` is not an epoch.  Fixed until kjit_engine_fini. */
int kjit_engine_epoch_range(uint32_t i, uint64_t *lo, uint64_t *hi);

/* Addresses at which translation stops and execution returns to native code
 * (the return address of an entry point, the simulator's sentinel). */
int kjit_engine_add_stop_address(uint64_t orig_pc);   /* 0, or -ENOSPC when full */
/* Without the lock: for the host's exit path. */
int kjit_engine_is_stop_address(uint64_t orig_pc);

/* The host announces each entry into and exit from an instrumented entry
 * point; the engine calls every registered plugin's on_entry / on_exit. */
void kjit_engine_notify_entry(uint64_t entry_pc);
/* Lock-free: whether a registered plugin has on_entry (an entry that skips
 * kjit_engine_notify_entry would miss it). */
int kjit_engine_has_entry_callbacks(void);
void kjit_engine_notify_exit(uint64_t entry_pc);

/* Drops every translation.  Safe while translated code runs elsewhere: new
 * entries go to fresh code, and the old contents are only reused after
 * kjit_os_quiesce().  Calls kjit_os_quiesce(), so the host calls it where
 * that may sleep (process context in the kernel).  Returns 0. */
int kjit_engine_flush(void);
/* True when a full cache moved translation to the other epoch: the host
 * should then call kjit_engine_reclaim() (it may sleep, like flush), after
 * which the retired half can be reused.  Until then a second full half
 * makes the engine decline translation (native execution, never an error). */
int kjit_engine_reclaim_pending(void);
int kjit_engine_reclaim(void);
/* Retires the active epoch now, without waiting: no entry, lookup or link
 * made after it returns reaches a translation made before it (tasks already
 * running in one finish there, as a native task past a patched site does).
 * Only takes the engine lock, so it may be called in atomic context, e.g.
 * from the host's hook on a kernel text patch before the patch is written.
 * Returns 1 when translations were retired (the host then calls
 * kjit_engine_reclaim from process context), 0 when there were none.  When
 * the other half is still retired the engine translates nothing until that
 * reclaim (entries run natively, counted as a full cache). */
int kjit_engine_retire(void);
/* Retires exactly the translations built from [addr, addr + len): the
 * traces whose build read any of those bytes (their code, or the
 * look-ahead that decided what their instrumentation may clobber).  Every
 * other translation stays, linked and found: links, chains and lookup
 * entries that led into a retired trace now lead to the dispatcher, which
 * translates the new text (tasks already inside finish there, as with
 * kjit_engine_retire).  Call it before the text changes; atomic context
 * like kjit_engine_retire.  Returns the number of traces retired, or -1
 * when they cannot be told apart (no room left to redirect or to index
 * them): the host then calls kjit_engine_retire. */
int kjit_engine_retire_range(uint64_t addr, uint64_t len);

/* How entries end.  Every entry the engine lets into the cache (a cache
 * address returned by kjit_engine_enter) either completes in it, returning
 * to a stop address from translated code, or leaves it for native code, at
 * most once, for the rest of the invocation.  Translated code counts both
 * where it happens (a locked add on the engine's cell in the data window,
 * on the native exit's path only), the dispatcher counts what it hands to
 * native code itself.  Departures a host causes (a sleep it does not follow)
 * are the host's to count. */
enum kjit_departure {
  KJIT_DEPART_COMPLETED = 0,   /* returned to a stop address from the cache   */
  KJIT_DEPART_NATIVE_CALL,     /* called or jumped to code never translated   */
  KJIT_DEPART_NATIVE_INSN,     /* an instruction that must run at its address */
  KJIT_DEPART_DECLINED,        /* a block the engine could not build          */
  KJIT_DEPART_CACHE_FULL,      /* both cache halves busy: reclaim pending     */
  KJIT_DEPART_HOOKED,          /* another tool's hook (a trampoline, a probe's
                                  buffer) at this instruction: it runs there  */
  KJIT_DEPART_COUNT
};
struct kjit_engine_departures {
  uint64_t entered;            /* kjit_engine_enter calls that returned cache code */
  uint64_t count[KJIT_DEPART_COUNT];
  /* kjit_engine_enter calls that returned the original pc, by reason: the
   * call ran natively from its first instruction (never COMPLETED) */
  uint64_t declined_at_entry[KJIT_DEPART_COUNT];
};
/* Reads (lock-free) or zeroes the counts since the engine was created. */
void kjit_engine_get_departures(struct kjit_engine_departures *out);
void kjit_engine_reset_departures(void);
/* The same counts per native target (the function called, the stop
 * address returned to, the instruction run natively): what an invocation
 * left the cache for, and where.  Copies up to `max` sites with a count;
 * returns how many sites exist.  Targets beyond the engine's table are in
 * the totals only. */
struct kjit_departure_site {
  uint64_t target;
  uint64_t count;
  uint32_t why;                /* enum kjit_departure */
  uint32_t reserved;
};
uint32_t kjit_engine_departure_sites(struct kjit_departure_site *out, uint32_t max);

/* Original address of the instruction containing code-cache address
 * `cache_pc` (for fault reporting and stack maps), 0 if unknown. */
uint64_t kjit_engine_original_pc(uint64_t cache_pc);
/* The same for a context that must not wait (an oops report, which may
 * interrupt the engine lock's holder): 0 also while the lock is taken. */
uint64_t kjit_engine_original_pc_nowait(uint64_t cache_pc);
/* 1 when an instruction of the code in [start, start + len) names `value`
 * (an immediate, a RIP-relative address, a branch target), 0 when none
 * does or the code cannot be read or decoded.  Works before engine init:
 * the host asks it about kernel functions at load (kernel bugs it knows). */
int kjit_engine_code_names_value(uint64_t start, uint64_t len, uint64_t value);

struct kjit_engine_stats {
  uint64_t blocks_built;
  uint64_t insns_translated;
  uint64_t fallbacks;          /* blocks ended early or declined            */
  uint64_t direct_links;
  uint64_t chain_links;
  uint64_t dispatcher_exits;
  uint64_t indirect_misses;
  uint64_t flushes;
  uint64_t cache_bytes_used;
  uint64_t arena_bytes_used;
  uint64_t inlined_calls;
  uint64_t outlined_calls;
  uint64_t cache_full;         /* flushes forced by a full cache half        */
  uint64_t native_calls;       /* call sites to leaves run natively (shim)   */
  uint64_t fast_entries;       /* entries served by the IBL without the lock */
  uint64_t stop_addresses;     /* distinct entry return addresses known     */
  uint64_t trace_fallthroughs; /* blocks laid out after their predecessor   */
  uint64_t ibl_full;           /* targets the in-cache lookup table had no slot for:
                                  their sites' misses go to the dispatcher   */
  uint64_t predicted_returns;  /* returns compiled as a compare with the return
                                  address their trace's call pushed        */
  uint64_t generations;        /* retirements served by a new generation in the
                                  active half (the other awaited its reclaim) */
  uint64_t call_copies;        /* callee copies made for one call site each  */
  uint64_t unchecked_returns;  /* predicted returns of compiled C functions:
                                  no compare, the slot holds what was pushed */
  uint64_t renamed_inlines;    /* inlined calls moved to registers dead at their
                                  point instead of saving live ones          */
  uint64_t decoded_by_address; /* instructions the decode cache answered from a
                                  decode at the same address                 */
  uint64_t decoded_by_encoding; /* ... from one of the same encoding elsewhere */
  uint64_t decoded_relocated;  /* ... from one of the same shape elsewhere, moved
                                  (relative to its address)                  */
  uint64_t decoded;            /* instructions the decoder (Zydis) decoded   */
  uint64_t traces_retired;     /* traces retired on their own for a text change
                                  (kjit_engine_retire_range)                 */
  uint64_t blocks_retired;     /* ... and their blocks                       */
};
void kjit_engine_get_stats(struct kjit_engine_stats *out);

/* Sweep support: decode and build the block at orig_pc without linking or
 * executing it; reports its direct successors.  Returns 0 when built fully,
 * 1 when built with a fallback, negative on failure. */
int kjit_engine_build_only(uint64_t orig_pc, uint64_t *succ, uint32_t *nsucc,
                           uint32_t *ninsns);

#ifdef __cplusplus
}
#endif
#endif
