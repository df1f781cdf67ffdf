/* SPDX-License-Identifier: GPL-2.0 */
/* The kjit plugin API (C ABI).
 *
 * A plugin registers callbacks; the engine calls them while it builds a
 * block, and the plugin answers by inserting calls to its analysis routines.
 * Small routines are inlined and specialised for their constant arguments
 * (icount's `*counter += size` becomes one add on an absolute address);
 * others are called with only the live state saved.
 *
 * icount (JIFL's first example tool), in this API:
 *
 *   static uint64_t *count;
 *   static void ins_count(uint64_t *c) { (*c)++; }
 *   static void on_insn(struct kjit_insn *insn, void *arg) {
 *     kjit_insert_call(insn, KJIT_IPOINT_BEFORE, (void *)ins_count,
 *                      1, KJIT_ARG_PTR(count));
 *   }
 */
#ifndef KJIT_PLUGIN_H
#define KJIT_PLUGIN_H

#include "kjit/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kjit_insn;     /* one original instruction of a block being built */
struct kjit_block;    /* one dynamic basic block being built             */

/* Where an inserted call runs. */
enum kjit_ipoint {
  KJIT_IPOINT_BEFORE = 0,     /* before the instruction                     */
  KJIT_IPOINT_AFTER = 1,      /* after it (fall-through instructions only)  */
  KJIT_IPOINT_TAKEN = 2,      /* on the taken edge of a conditional branch  */
  KJIT_IPOINT_NOT_TAKEN = 3,  /* on its not-taken edge                      */
};

/* Typed arguments of an inserted call. */
enum kjit_arg_kind {
  KJIT_ARG_KIND_CONST = 1,    /* a 64-bit constant                          */
  KJIT_ARG_KIND_PTR = 2,      /* a pointer into plugin data (kjit_alloc)    */
  KJIT_ARG_KIND_REG = 3,      /* the value of a GPR before the instruction  */
  KJIT_ARG_KIND_INSN_PC = 4,  /* the original address of the instruction    */
  KJIT_ARG_KIND_BRANCH_TARGET = 5, /* a direct branch's target              */
  KJIT_ARG_KIND_BLOCK_PC = 6, /* the original start address of the block    */
  KJIT_ARG_KIND_FLAGS = 7,    /* rflags at the insertion point              */
  KJIT_ARG_KIND_MEM_EA = 8,   /* effective address of the explicit memory
                               * operand, without the segment base (add the
                               * GS/FS base for kjit_insn_mem_segment())    */
  KJIT_ARG_KIND_MEM_SIZE = 9, /* its size in bytes                          */
  KJIT_ARG_KIND_PERCPU = 10,  /* the host's own per-CPU data: a gs-relative
                               * address (x86-64 Linux: &var of a
                               * DEFINE_PER_CPU variable), addressed like
                               * kjit_alloc_percpu data (see there)         */
};
struct kjit_arg {
  uint32_t kind;
  uint32_t reg;               /* KJIT_REG_* for KJIT_ARG_KIND_REG           */
  uint64_t value;
};
#define KJIT_ARG_CONST(v) ((struct kjit_arg){KJIT_ARG_KIND_CONST, 0, (uint64_t)(v)})
#define KJIT_ARG_PTR(p) ((struct kjit_arg){KJIT_ARG_KIND_PTR, 0, (uint64_t)(uintptr_t)(p)})
#define KJIT_ARG_REG(r) ((struct kjit_arg){KJIT_ARG_KIND_REG, (r), 0})
#define KJIT_ARG_INSN_PC() ((struct kjit_arg){KJIT_ARG_KIND_INSN_PC, 0, 0})
#define KJIT_ARG_BRANCH_TARGET() ((struct kjit_arg){KJIT_ARG_KIND_BRANCH_TARGET, 0, 0})
#define KJIT_ARG_BLOCK_PC() ((struct kjit_arg){KJIT_ARG_KIND_BLOCK_PC, 0, 0})
#define KJIT_ARG_FLAGS() ((struct kjit_arg){KJIT_ARG_KIND_FLAGS, 0, 0})
#define KJIT_ARG_MEM_EA() ((struct kjit_arg){KJIT_ARG_KIND_MEM_EA, 0, 0})
#define KJIT_ARG_MEM_SIZE() ((struct kjit_arg){KJIT_ARG_KIND_MEM_SIZE, 0, 0})
#define KJIT_ARG_PERCPU(a) ((struct kjit_arg){KJIT_ARG_KIND_PERCPU, 0, (uint64_t)(uintptr_t)(a)})
#define KJIT_RFLAGS_ZF 0x40
#define KJIT_MAX_ARGS 6

/* GPR numbers, in hardware encoding order. */
enum kjit_reg {
  KJIT_REG_RAX, KJIT_REG_RCX, KJIT_REG_RDX, KJIT_REG_RBX,
  KJIT_REG_RSP, KJIT_REG_RBP, KJIT_REG_RSI, KJIT_REG_RDI,
  KJIT_REG_R8, KJIT_REG_R9, KJIT_REG_R10, KJIT_REG_R11,
  KJIT_REG_R12, KJIT_REG_R13, KJIT_REG_R14, KJIT_REG_R15,
};

/* Control-flow class of an instruction. */
enum kjit_cf_class {
  KJIT_CF_NONE = 0,          /* falls through                               */
  KJIT_CF_JCC,               /* conditional direct branch (incl. loop/jrcxz)*/
  KJIT_CF_JMP,               /* direct jump                                 */
  KJIT_CF_CALL,              /* direct call                                 */
  KJIT_CF_RET,               /* ret, or jmp to the kernel's return thunk    */
  KJIT_CF_JMP_INDIRECT,      /* jmp *x, or jmp to a retpoline/ITS thunk     */
  KJIT_CF_CALL_INDIRECT,     /* call *x, or call to a retpoline/ITS thunk   */
  KJIT_CF_FENTRY,            /* call __fentry__ (an ftrace site)            */
  KJIT_CF_TRAP,              /* ud2, int3, int n, hlt: run at the original  */
  KJIT_CF_SYSTEM,            /* sysret, iret, syscall...: never translated  */
};

/* The one definition of where a counted basic block ends: at a control
 * transfer (jcc, jmp, call, ret, direct or not, the thunks and the fentry
 * call included).  The engine ends every block it builds at one, or cuts a
 * longer straight-line run at its size limit; a cut block and its
 * continuation count once.  Traps and system instructions run natively and
 * end no counted block.  bbcount (kjit_insn_is_branch), the capture's BLOCKS
 * log and the simulator's reference runner (from Capstone's class) count
 * with it. */
static inline int kjit_cf_ends_block(enum kjit_cf_class cf)
{
  return cf != KJIT_CF_NONE && cf != KJIT_CF_TRAP && cf != KJIT_CF_SYSTEM;
}

/* Instruction queries. */
uint64_t kjit_insn_pc(const struct kjit_insn *insn);
uint32_t kjit_insn_length(const struct kjit_insn *insn);
enum kjit_cf_class kjit_insn_cf_class(const struct kjit_insn *insn);
/* jcc/jmp/call/ret, direct or not: kjit_cf_ends_block of its class. */
int kjit_insn_is_branch(const struct kjit_insn *insn);
int kjit_insn_is_conditional(const struct kjit_insn *insn);
int kjit_insn_is_call(const struct kjit_insn *insn);
int kjit_insn_is_return(const struct kjit_insn *insn);
int kjit_insn_has_lock_prefix(const struct kjit_insn *insn);
int kjit_insn_has_rep_prefix(const struct kjit_insn *insn);
/* Static branch hint prefix: 0x3e (taken), 0x2e (not taken), else none. */
enum kjit_branch_hint { KJIT_HINT_NONE = 0, KJIT_HINT_TAKEN = 1, KJIT_HINT_NOT_TAKEN = 2 };
enum kjit_branch_hint kjit_insn_branch_hint(const struct kjit_insn *insn);
/* Compiler layout hint: a forward conditional branch is predicted not taken,
 * a backward one taken (what likely()/unlikely() produce). */
enum kjit_branch_hint kjit_insn_layout_hint(const struct kjit_insn *insn);
uint64_t kjit_insn_branch_target(const struct kjit_insn *insn); /* 0 if not direct */
int kjit_insn_is_cmpxchg(const struct kjit_insn *insn);
/* cmpxchg, xadd and xchg with a memory operand: the GPR that holds, after
 * the instruction, the memory operand's value as the instruction read it
 * (atomically with its write when locked: rax for cmpxchg, whether it
 * succeeded or not; the register operand for xadd and xchg).  -1 for every
 * other instruction, cmpxchg8b/16b included (two registers). */
int kjit_insn_atomic_old_value_reg(const struct kjit_insn *insn);
/* mov, movzx, movsx and movsxd from memory into a GPR: that register, whose
 * low kjit_insn_memory_size() bytes hold after the instruction what it read
 * (ah..dh excepted: -1).  A recorder logs the value from there, exact even
 * when another CPU writes the word right after the load. */
int kjit_insn_loaded_value_reg(const struct kjit_insn *insn);
/* cmp and test whose two operands are each a GPR (not ah..dh), an
 * immediate or the explicit memory operand: KJIT_COMPARE_CMP or
 * KJIT_COMPARE_TEST, with the operands in instruction order (cmp's first is
 * what the second is subtracted from; the immediate sign-extended to 64
 * bits) and their size in bytes; else 0. */
enum kjit_operand_kind { KJIT_OPERAND_NONE = 0, KJIT_OPERAND_REG = 1, KJIT_OPERAND_IMM = 2, KJIT_OPERAND_MEM = 3 };
enum { KJIT_COMPARE_CMP = 1, KJIT_COMPARE_TEST = 2 };
struct kjit_operand { uint32_t kind; uint32_t reg; int64_t imm; };
int kjit_insn_comparison(const struct kjit_insn *insn, struct kjit_operand ops[2], uint32_t *size);
/* bt, bts, btr and btc with a memory operand and a register bit offset:
 * that register, else -1.  The offset is signed and unbounded: the
 * instruction accesses the operand-sized word at
 * EA + (offset >> log2(operand bits)) * operand bytes, not the one at EA. */
int kjit_insn_bit_offset_reg(const struct kjit_insn *insn);
/* The explicit memory operand, if any (string instructions and push/pop
 * access memory implicitly and report 0 here). */
int kjit_insn_reads_memory(const struct kjit_insn *insn);
int kjit_insn_writes_memory(const struct kjit_insn *insn);
uint32_t kjit_insn_memory_size(const struct kjit_insn *insn);
enum kjit_segment { KJIT_SEG_NONE = 0, KJIT_SEG_FS = 4, KJIT_SEG_GS = 5 };
enum kjit_segment kjit_insn_mem_segment(const struct kjit_insn *insn);
/* The explicit memory operand addresses through rsp (base or index): the
 * running task's own stack, which nothing else writes while it runs. */
int kjit_insn_mem_on_stack(const struct kjit_insn *insn);
/* The instruction may change an arithmetic flag (CF, PF, AF, ZF, SF, OF). */
int kjit_insn_modifies_flags(const struct kjit_insn *insn);
/* Zydis mnemonic id (ZydisMnemonic) for finer queries. */
uint32_t kjit_insn_mnemonic(const struct kjit_insn *insn);
/* nop, prefetch, invlpg and the cache-line flushes: their explicit memory
 * operand is only an address (kjit_insn_reads_memory may say 1, yet
 * nothing is read). */
int kjit_insn_is_memory_hint(const struct kjit_insn *insn);
/* 1 when the instruction changes no GPR, flag or memory, transfers no
 * control and touches no machine state a replay sees (nop, fences, pause,
 * prefetch): a recorder may take a record across it. */
int kjit_insn_writes_nothing(const struct kjit_insn *insn);
/* String instructions: what they do with their implicit operands (rsi is
 * read by movs, lods and cmps; rdi by cmps and scas; rcx counts with a rep
 * prefix, kjit_insn_has_rep_prefix) and the bytes of one element. */
enum kjit_string_op {
  KJIT_STRING_NONE = 0, KJIT_STRING_MOVS, KJIT_STRING_LODS, KJIT_STRING_STOS,
  KJIT_STRING_CMPS, KJIT_STRING_SCAS,
};
enum kjit_string_op kjit_insn_string_op(const struct kjit_insn *insn);
uint32_t kjit_insn_string_width(const struct kjit_insn *insn);   /* 1, 2, 4, 8; 0 if none */
/* Instructions whose results a replay cannot recompute from memory and
 * registers, by what they produce (docs/capture-format.md, NONDET):
 *  REGISTERS  GPRs and perhaps flags: rdtsc, rdtscp, rdpmc, rdmsr, cpuid,
 *             xgetbv, rdpkru, in, rdrand, rdseed, rdpid, rdfsbase,
 *             rdgsbase, rdssp, lsl, lar, str/sldt/smsw to a register, mov
 *             from a control, debug or segment register;
 *  FLAGS      only rflags: verr, verw;
 *  MEMORY     only its memory operand: sgdt, sidt, str/sldt/smsw to memory,
 *             mov from a segment register to memory, the xsave family (a
 *             later explicit read of that memory is logged as any read);
 *  EFFECT     nothing a replay sees, only machine state: out, wrmsr,
 *             wrpkru, xsetbv, wrfsbase, wrgsbase, xrstor family, mov to a control, debug or
 *             segment register, invlpg, invpcid, wbinvd, lgdt/lidt/lldt/
 *             ltr/lmsw, clts.
 * A capture logs each after it ran (its result registers and flags); the
 * replay skips it and loads them. */
enum kjit_nondet_kind {
  KJIT_NONDET_NONE = 0, KJIT_NONDET_REGISTERS, KJIT_NONDET_FLAGS, KJIT_NONDET_MEMORY,
  KJIT_NONDET_EFFECT,
};
enum kjit_nondet_kind kjit_insn_nondet_kind(const struct kjit_insn *insn);
/* Whether the GS base is the task's user one at `where` (inside a swapgs
 * pair of the block, as in load_gs_index).  kjit_insert_call refuses those
 * points (-EPERM): a routine, and the fault handler of anything it
 * touches, reach per-CPU data through GS. */
int kjit_insn_gs_swapped(const struct kjit_insn *insn, enum kjit_ipoint where);
/* The GPR a capture logs besides rcx, rdx, rbx and rflags: the one of
 * rdrand, rdseed, rdpid, rdfsbase, lsl... that is not among those, rax
 * otherwise (also for the kinds without a GPR result, where rax is
 * unchanged); -1 for a deterministic instruction. */
int kjit_insn_nondeterministic_reg(const struct kjit_insn *insn);

uint64_t kjit_block_pc(const struct kjit_block *block);
uint32_t kjit_block_insn_count(const struct kjit_block *block);
struct kjit_insn *kjit_block_insn(struct kjit_block *block, uint32_t index);
/* True when the block is the first block of a routine (a call target or an
 * entry point). */
int kjit_block_is_routine_start(const struct kjit_block *block);
/* Runs: blocks that run exactly as often as the block before them.  A trace
 * lays a call's callee (and what follows in that copy) right after the
 * caller's block, in a copy made for that one call and entered from nowhere
 * else.  Nonzero from kjit_block_runs_with_previous when the block is such a
 * copy and the block on_block saw just before it always goes on into it:
 * that block's end has no condition and nothing in it can leave the cache
 * first (a user access's fault).  Every time one runs, so does the other:
 * a counter of the first counts both.  Nonzero from
 * kjit_block_runs_unless_previous_taken when the block is such a copy laid
 * on the not-taken side of the conditional branch that ends the block
 * before it: it runs exactly when that block runs and its branch is not
 * taken, so a counter of the first less one on its taken edge
 * (KJIT_IPOINT_TAKEN) counts it, and the hot side of a branch needs no
 * counter.  kjit_block_may_lead_run is nonzero for a block that such a
 * block may follow; a plugin that keeps a counter per run needs one for
 * those only.  The plugin learns that a block it saw will not run from
 * on_block_dropped. */
int kjit_block_runs_with_previous(const struct kjit_block *block);
int kjit_block_runs_unless_previous_taken(const struct kjit_block *block);
int kjit_block_may_lead_run(const struct kjit_block *block);
/* The half of the code cache the block is built into (0 or 1): state a
 * plugin keeps per translation can go when on_cache_reset names the half. */
uint32_t kjit_block_cache_half(const struct kjit_block *block);

/* Inserts a call to `routine` with `nargs` typed arguments.  Calls inserted
 * from on_block/on_routine with KJIT_IPOINT_BEFORE are block-level: every
 * instruction of a dynamic block runs when any does, so the engine may move
 * them to the point of the block where the least state is live.  Returns 0, or
 * a negative errno-style value for a malformed request (bad ipoint for the
 * instruction, too many args, unknown kind) or -EPERM at a point where the GS
 * base is the user's (kjit_insn_gs_swapped); the request is then ignored. */
int kjit_insert_call(struct kjit_insn *insn, enum kjit_ipoint where, void *routine,
                     uint32_t nargs, ...);
int kjit_insert_call_argv(struct kjit_insn *insn, enum kjit_ipoint where, void *routine,
                          uint32_t nargs, const struct kjit_arg *args);
/* As kjit_insert_call, but the call happens only when the byte `guard`
 * names is nonzero when translated code reaches the point: `guard` is a
 * KJIT_ARG_PTR (kjit_alloc or kjit_alloc_percpu data) or a KJIT_ARG_PERCPU.
 * Code that finds it zero pays one compare and a branch (and a flags save
 * where the flags are live), not the call's register saves: a routine that
 * matters to a few tasks, or only in some mode, costs the others almost
 * nothing.  -EINVAL for any other guard kind. */
int kjit_insert_call_if(struct kjit_insn *insn, enum kjit_ipoint where, struct kjit_arg guard,
                        void *routine, uint32_t nargs, ...);

/* The program's registers at an inserted call's point, which a context call
 * is handed whole (DynamoRIO's dr_mcontext_t): every GPR as the original
 * code has it there (rsp too: the original stack pointer, not the save
 * area's), rflags, and rip, the original address the code goes on at with
 * this state: the instruction's before it, the next one's after it and on a
 * branch's not-taken edge, the branch target on its taken edge.  A register
 * that is dead at the point holds what the translated code has in it: an
 * inlined routine before the call may have used it as scratch. */
struct kjit_mcontext {
  uint64_t gpr[16];           /* KJIT_REG_* order                           */
  uint64_t rflags;
  uint64_t rip;
};
typedef void (*kjit_context_routine)(const struct kjit_mcontext *mc);
/* Inserts a call to `routine(mc)`, for a routine that needs more of the
 * state than six arguments carry (a recorder taking every register).  The
 * context is the call's own register save area on the stack, valid during
 * the call only; the routine must not write it.  Every register and the
 * flags are saved and restored whatever is live, so a context call costs
 * some 35 pushes and pops: an argument call is cheaper wherever six
 * registers are enough.  Never inlined; at a point, calls run in the order
 * they were inserted, context calls or not.  Returns as kjit_insert_call. */
int kjit_insert_context_call(struct kjit_insn *insn, enum kjit_ipoint where,
                             kjit_context_routine routine);

/* Plugin data that translated code may touch: counters, tables.  Zeroed.
 * Returns NULL when the data window is exhausted.  One copy shared by every
 * CPU: increments from two CPUs at once can be lost (the inlined add has
 * no lock prefix).  Use it for data written at build time or read-mostly
 * tables, and for counters only where an approximate count is enough. */
void *kjit_alloc(uint64_t size);

/* Per-CPU plugin data: one zeroed copy of `size` bytes per CPU.  Pass the
 * pointer as KJIT_ARG_PTR exactly like kjit_alloc's: an inlined routine
 * then updates the running CPU's copy with one gs-relative instruction
 * (`add qword gs:[...], imm`, like this_cpu_add), so counts are exact on
 * SMP and cost no lock.  Use it for counters translated code increments.
 * The pointer names CPU 0's copy on the host: read results with
 * kjit_percpu_sum_u64 or kjit_percpu_copy, never by dereferencing it.
 * Routines must use the pointer only to address memory (not store it or
 * do arithmetic beyond an offset); a routine that cannot be inlined gets
 * the running CPU's copy, which a migration between the call and its
 * store can make inexact.  Returns NULL when the per-CPU window is
 * exhausted or the host has none (fall back to kjit_alloc). */
void *kjit_alloc_percpu(uint64_t size);
/* The sum over every CPU of the u64 at `p` (from kjit_alloc_percpu, or an
 * offset into it); for a kjit_alloc pointer, the u64 itself; 0 for NULL. */
uint64_t kjit_percpu_sum_u64(const void *p);
/* The host view of CPU `cpu`'s copy of `p`, or NULL (no such CPU, or `p`
 * is not per-CPU data).  CPUs are 0 .. kjit_percpu_ncpus() - 1. */
void *kjit_percpu_copy(const void *p, uint32_t cpu);
uint32_t kjit_percpu_ncpus(void);

/* Callbacks.  Any may be NULL. */
struct kjit_plugin {
  const char *name;
  void *arg;                                            /* passed back */
  void (*on_block)(struct kjit_block *block, void *arg);
  void (*on_routine)(struct kjit_block *first_block, void *arg);
  void (*on_insn)(struct kjit_insn *insn, void *arg);
  /* Entry and exit of an instrumented entry point (syscall or function):
   * on_entry gets the entry point's address, on_exit the original address
   * execution returns to.  While a plugin has on_exit, returns are not
   * chained to native code, so every exit costs a dispatcher trip. */
  void (*on_entry)(uint64_t entry_pc, void *arg);
  void (*on_exit)(uint64_t entry_pc, void *arg);
  /* The block on_block saw last will not run: its build was given up after
   * the plugins had seen it (the cache or its arena full, an access the
   * host cannot mirror); a trace it was to join ends before it.  A plugin
   * that keeps state per translation, not per address, takes it back here.
   * The members of a trace given up as a whole for lack of room, after
   * they were built, are not reported: a flush follows, and none of their
   * code ever runs. */
  void (*on_block_dropped)(struct kjit_block *block, void *arg);
  /* Every translation in half `half` of the code cache is gone for good (no
   * CPU can run it any more; the half is about to be reused), under the
   * engine lock, before any block is built there again. */
  void (*on_cache_reset)(uint32_t half, void *arg);
};

/* Registers the plugin with the engine (one active plugin set; a flush
 * follows so that every block is rebuilt with the new instrumentation). */
int kjit_register_plugin(const struct kjit_plugin *plugin);
int kjit_unregister_plugin(const struct kjit_plugin *plugin);

#ifdef __cplusplus
}
#endif
#endif
