/* SPDX-License-Identifier: GPL-2.0 */
/* The OS shim: the only door between the freestanding engine and a host.
 *
 * Every host (the Linux module in os/linux/, the simulator in
 * os/userspace-sim/) implements exactly these functions; the core never
 * includes a host header.  Binding is at link time, no virtual dispatch. */
#ifndef KJIT_OS_SHIM_H
#define KJIT_OS_SHIM_H

#include "kjit/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The module's default sizes (parameters cache_kb, arena_kb), which the
 * simulator uses too: its figures are then the kernel's, flushes included.
 * The cache is the whole section the module image reserves anyway (8 MiB,
 * os/linux/cache_area.h): each half has room for 65,552 blocks
 * (Epoch::table_capacity), and the arena for their records. */
#define KJIT_DEFAULT_CACHE_KB 8192
#define KJIT_DEFAULT_ARENA_KB 32768

/* Memory handed to the engine once, at creation.  The code cache has two
 * views of the same bytes: the engine writes through `write_view` and the
 * CPU executes at `exec_base` (W^X in the kernel; in the simulator the exec
 * view lives in the emulated address space).  The data window is memory the
 * translated code reads and writes (plugin counters, chain tables); pointers
 * the plugin passes as KJIT_ARG_PTR are translated host->exec by the engine. */
struct kjit_os_memory {
  uint8_t *arena;          /* engine metadata, host view only */
  uint64_t arena_size;
  uint8_t *code_write_view;
  uint64_t code_exec_base;
  uint64_t code_size;
  uint8_t *data_host_view;
  uint64_t data_exec_base;
  uint64_t data_size;
  /* Per-CPU data window (percpu_size 0: none): percpu_size bytes on every
   * CPU.  Translated code reaches the running CPU's copy gs-relative, as
   * this_cpu_add does: byte `off` of the window is gs:[percpu_offset + off]
   * (the kernel's __percpu pointer of the window, which need not fit a
   * sign-extended disp32).  percpu_host_views[cpu], cpu < percpu_ncpus, is
   * the host view of CPU cpu's copy, NULL for a CPU that cannot exist.
   * percpu_self is the gs-relative address of a u64 that holds the running
   * CPU's gs base (the kernel's this_cpu_off), 0 if none: it turns a
   * per-CPU pointer into this CPU's copy for routines that are called
   * rather than inlined. */
  uint64_t percpu_offset;
  uint64_t percpu_size;
  uint64_t percpu_self;
  uint8_t *const *percpu_host_views;
  uint32_t percpu_ncpus;
};

/* Kernel facts the engine needs to classify control flow. */
#define KJIT_GPR_COUNT 16
#define KJIT_RETURN_THUNKS 8
/* The return thunks of the kernel's mitigations, by name (those a kernel
 * lacks are absent from its symbols). */
#define KJIT_RETURN_THUNK_NAMES                                              \
  "retbleed_return_thunk", "srso_return_thunk", "srso_alias_return_thunk", \
  "its_return_thunk", "call_depth_return_thunk", "__x86_return_skl"
struct kjit_os_kernel_facts {
  uint64_t return_thunk;                      /* __x86_return_thunk */
  uint64_t retpoline_thunk[KJIT_GPR_COUNT];   /* __x86_indirect_thunk_<reg>, 0 if absent */
  uint64_t its_thunk[KJIT_GPR_COUNT];         /* __x86_indirect_its_thunk_<reg> */
  uint64_t jump_thunk[KJIT_GPR_COUNT];        /* __x86_indirect_jump_thunk_<reg> */
  uint64_t call_thunk[KJIT_GPR_COUNT];        /* __x86_indirect_call_thunk_<reg> */
  /* The other thunks a return may jump to: at boot the kernel rewrites
   * every `jmp __x86_return_thunk` into a jump to the thunk the CPU's
   * mitigations chose (KJIT_RETURN_THUNK_NAMES and the live value of
   * x86_return_thunk); 0 = unused slot. */
  uint64_t return_thunks[KJIT_RETURN_THUNKS];
  uint64_t fentry;                            /* __fentry__ */
  uint64_t schedule_funnel;                   /* __schedule */
  /* Where the engine's exits land (host dispatcher gates). */
  uint64_t gate_direct;    /* call target of direct-exit stubs   */
  uint64_t gate_indirect;  /* call target of indirect-miss stubs */
  /* Where a translated call to schedule_funnel goes instead (0: straight
   * to the funnel, execution then continues natively after it returns).
   * The host's scheduler gate gets the stack as the call leaves it, [rsp] =
   * the original return address, and jumps to the funnel itself: it is how
   * a host follows a task through a sleep (os/linux/sched_resume.c). */
  uint64_t gate_sched;
};

/* Reads `len` live code bytes at `addr` (after alternatives/static-key
 * patching in the kernel).  Returns the number of bytes readable (may be
 * short at the end of a region, 0 if unmapped).  Every byte a translation
 * depends on (copied, decoded for liveness) is read through here, under the
 * engine lock: the host may remember what was read to know which text
 * changes must retire translations (kjit_engine_retire).  A host may also
 * answer 0 for bytes that are being rewritten right now: the engine then
 * runs the instruction there natively. */
uint64_t kjit_os_read_code(uint64_t addr, uint8_t *out, uint64_t len);

/* True when `addr` may be translated at all (kernel text not on the
 * noinstr/kprobes blacklist; in the simulator: inside a captured region). */
int kjit_os_may_translate(uint64_t addr);

/* True when `addr` is code that outlives every translation that may jump
 * to it: kernel text, live module text (whose unloading flushes the cache
 * first), the host's own code; but no hook's code, not even one in the
 * kernel image (ftrace's shared trampolines), because a copy's returns
 * trust that no hook at its function's entry ran (block_builder.cc).
 * Anything else (another tool's trampoline,
 * a probe's detour buffer, BPF code, a module not live yet) is memory the
 * engine neither owns nor tracks: a direct branch there is never copied or
 * linked, the branch instruction runs natively at its own address instead
 * (KJIT_DEPART_HOOKED), and an indirect branch there is served natively
 * without a chain link. */
int kjit_os_is_text(uint64_t addr);

/* True when a call from translated code to `target`, which is not
 * translated (kjit_os_may_translate() is 0), may run natively and return
 * into the cache: the callee then runs with a code-cache return address on
 * the stack.  Only functions that never sleep, never unwind and never look
 * at their return address qualify (memcpy/memset in noinstr text).  When 0,
 * execution leaves the cache for the rest of the entry point. */
int kjit_os_callable_natively(uint64_t target);

/* True when `addr` is in a compiled C function (the kernel: one with an
 * ftrace record at its start, which only compiler-emitted code has).  After
 * such a function returns, its callers read neither the scratch registers
 * but rax and rdx nor the arithmetic flags: the SysV ABI leaves them to the
 * callee, and GCC's -fipa-ra, which lets a caller in the same file keep
 * values in registers its callee happens not to touch, is off in code
 * compiled with -pg.  (An inline asm's pushf right after such a call may
 * save other arithmetic flags than natively: nothing reads them from the
 * saved word but IF, and a popf of it sets flags no compiled code reads.)
 * 0 when unsure (assembly, no symbol). */
int kjit_os_c_abi_return(uint64_t addr);

/* 1 when addr is an ftrace (fentry) site: the 5 bytes ftrace users switch
 * between a NOP and a call at any time.  A translation never copies them:
 * it tests the live first byte (a NOP's 0x0f) each time it passes and runs
 * natively from the site when the site is on, so switching it retires
 * nothing.  Asked about a block's first instruction and the one after a
 * first ENDBR. */
int kjit_os_fentry_site(uint64_t addr);

/* Instruction sites that are looked up by their original address: an
 * exception-table site (user access that faults by design), or a bug-table
 * `ud2`.  The engine never moves such an instruction silently.  is_trap:
 * the decoder classified the instruction as a trap (ud2, int3, ...); only
 * a trap can be a bug-table site, so the host looks for one only then. */
enum kjit_os_site_kind {
  KJIT_SITE_PLAIN = 0,
  KJIT_SITE_EXTABLE = 1,
  KJIT_SITE_BUG = 2,
};
enum kjit_os_site_kind kjit_os_classify_site(uint64_t addr, int is_trap);

/* Where a fault at exception-table site `addr` goes on (its fixup), when
 * the handler just continues there; 0 when the host does not know it or the
 * fixup means something else.  The engine then gives the mirror a fixup in
 * the cache that leads to the fixup's translation. */
uint64_t kjit_os_extable_fixup(uint64_t addr);

/* Called after the engine moved an instruction that has an exception-table
 * entry to `copy_addr` in the cache: the host makes faults at the copy
 * behave like faults at the original, continuing at `fixup_addr` (0: the
 * original's fixup).  Returns 1 when done; 0 when it cannot (the engine
 * then leaves the cache before the site instead); -1 when it cannot now but
 * may later (the engine then declines the block this once and builds it
 * again the next time it is needed). */
int kjit_os_mirror_extable(uint64_t orig_addr, uint64_t copy_addr, uint64_t fixup_addr);

/* The engine wrote translated code (or patched a link) at exec address
 * `addr`; the host makes the CPU see it (TB invalidation in the emulator,
 * serialisation for cross-modifying code in the kernel). */
void kjit_os_code_written(uint64_t exec_addr, uint64_t len);

/* One engine-wide lock.  Translation is rare and short; the lock keeps the
 * hash table, arena and links consistent across CPUs. */
void kjit_os_lock(void);
void kjit_os_unlock(void);
/* The lock if it is free (nonzero, then kjit_os_unlock releases it), else 0
 * at once: for reports that must not wait. */
int kjit_os_trylock(void);
/* Current CPU number, for per-CPU statistics. */
uint32_t kjit_os_cpu(void);
/* Waits until no task can still execute, or return into, code-cache
 * addresses in [exec_lo, exec_hi): none is running there, preempted there,
 * or sleeping in an exception handler (a page fault on user memory) taken
 * there.  Immediate in the simulator. */
void kjit_os_quiesce(uint64_t exec_lo, uint64_t exec_hi);

/* Logging: a short NUL-terminated message. */
void kjit_os_log(const char *msg);
/* Symbol of `addr` as "name+0xoff" into `out` (NUL-terminated, may be ""). */
void kjit_os_symbolize(uint64_t addr, char *out, uint64_t out_len);

/* Simulator-only escape for non-inlinable plugin calls: the exec address of
 * a gate that calls host function `fn` (0 in the kernel, where the engine
 * calls `fn` directly because plugins are kernel code). */
uint64_t kjit_os_host_call_gate(uint64_t fn);
/* The same for a context call (kjit_insert_context_call): the gate hands
 * `fn` the host's copy of the struct kjit_mcontext rdi points to in the
 * emulated memory.  0 in the kernel. */
uint64_t kjit_os_host_context_gate(uint64_t fn);

#ifdef __cplusplus
}
#endif
#endif
