// SPDX-License-Identifier: GPL-2.0
// The plugin API (include/kjit/plugin.h): instruction queries, call
// insertion with validation, plugin data, registration.
#include <stdarg.h>

#include "arch/arch.h"
#include "core/build_context.h"
#include "core/engine_state.h"

using namespace kjit;

namespace {

constexpr int kEINVAL = -22;
constexpr int kENOSPC = -28;
constexpr int kEPERM = -1;
constexpr int kEBUSY = -16;

bool ipoint_valid_for(const x86::Insn &in, uint32_t where, bool is_last) {
  switch (where) {
    case KJIT_IPOINT_BEFORE:
      return true;
    case KJIT_IPOINT_AFTER:
      // Only instructions that fall through to the next one in the block.
      return in.cf == KJIT_CF_NONE && !is_last;
    case KJIT_IPOINT_TAKEN:
    case KJIT_IPOINT_NOT_TAKEN:
      return in.cf == KJIT_CF_JCC;
    default:
      return false;
  }
}

bool arg_valid(const kjit_arg &a) {
  switch (a.kind) {
    case KJIT_ARG_KIND_CONST: case KJIT_ARG_KIND_PTR: case KJIT_ARG_KIND_INSN_PC:
    case KJIT_ARG_KIND_BRANCH_TARGET: case KJIT_ARG_KIND_BLOCK_PC: case KJIT_ARG_KIND_FLAGS:
    case KJIT_ARG_KIND_PERCPU:
      return true;
    case KJIT_ARG_KIND_MEM_EA: case KJIT_ARG_KIND_MEM_SIZE:
      return true;  // checked against the instruction in kjit_insert_call_argv
    case KJIT_ARG_KIND_REG:
      return a.reg < 16;
    default:
      return false;
  }
}

}  // namespace

namespace kjit {

void *data_alloc_locked(uint64_t size) {
  EngineState &g = g_engine;
  uint64_t start = (g.data_used + 63) & ~63ull;  // own cache line: counters are hot
  if (start + size > g.mem.data_size || start + size < start) return nullptr;
  g.data_used = start + size;
  uint8_t *p = g.mem.data_host_view + start;
  __builtin_memset(p, 0, size);
  return p;
}

}  // namespace kjit

extern "C" {

uint64_t kjit_insn_pc(const kjit_insn *i) { return i->insn.pc; }
uint32_t kjit_insn_length(const kjit_insn *i) { return i->insn.length; }
enum kjit_cf_class kjit_insn_cf_class(const kjit_insn *i) { return static_cast<kjit_cf_class>(i->insn.cf); }
int kjit_insn_is_branch(const kjit_insn *i) { return x86::ends_counted_block(i->insn); }
int kjit_insn_is_conditional(const kjit_insn *i) { return i->insn.cf == KJIT_CF_JCC; }
int kjit_insn_is_call(const kjit_insn *i) {
  return i->insn.cf == KJIT_CF_CALL || i->insn.cf == KJIT_CF_CALL_INDIRECT || i->insn.cf == KJIT_CF_FENTRY;
}
int kjit_insn_is_return(const kjit_insn *i) { return i->insn.cf == KJIT_CF_RET; }
int kjit_insn_has_lock_prefix(const kjit_insn *i) { return (i->insn.prefixes & x86::kPrefixLock) != 0; }
int kjit_insn_has_rep_prefix(const kjit_insn *i) {
  return (i->insn.prefixes & (x86::kPrefixRep | x86::kPrefixRepne)) != 0;
}
enum kjit_branch_hint kjit_insn_branch_hint(const kjit_insn *i) {
  if (i->insn.cf != KJIT_CF_JCC) return KJIT_HINT_NONE;
  if (i->insn.prefixes & x86::kPrefixHintTaken) return KJIT_HINT_TAKEN;
  if (i->insn.prefixes & x86::kPrefixHintNotTaken) return KJIT_HINT_NOT_TAKEN;
  return KJIT_HINT_NONE;
}
enum kjit_branch_hint kjit_insn_layout_hint(const kjit_insn *i) {
  if (i->insn.cf != KJIT_CF_JCC) return KJIT_HINT_NONE;
  return i->insn.target <= i->insn.pc ? KJIT_HINT_TAKEN : KJIT_HINT_NOT_TAKEN;
}
uint64_t kjit_insn_branch_target(const kjit_insn *i) {
  switch (i->insn.cf) {
    case KJIT_CF_JCC: case KJIT_CF_JMP: case KJIT_CF_CALL: case KJIT_CF_FENTRY:
      return i->insn.target;
    default:
      return 0;
  }
}
int kjit_insn_is_cmpxchg(const kjit_insn *i) { return arch::is_cmpxchg(i->insn); }
int kjit_insn_atomic_old_value_reg(const kjit_insn *i) { return arch::atomic_old_value_reg(i->insn); }
int kjit_insn_loaded_value_reg(const kjit_insn *i) {
  return i->insn.loaded_value_reg == x86::kNoReg ? -1 : i->insn.loaded_value_reg;
}
int kjit_insn_comparison(const kjit_insn *i, struct kjit_operand ops[2], uint32_t *size) {
  const x86::Insn &in = i->insn;
  if (!in.cmp_kind[0]) return 0;
  for (int k = 0; k < 2; k++) {
    ops[k].kind = in.cmp_kind[k];
    ops[k].reg = in.cmp_reg[k];
    ops[k].imm = in.cmp_kind[k] == KJIT_OPERAND_IMM ? in.cmp_imm : 0;
  }
  *size = in.cmp_size;
  return in.cmp_is_test ? KJIT_COMPARE_TEST : KJIT_COMPARE_CMP;
}
int kjit_insn_bit_offset_reg(const kjit_insn *i) {
  return i->insn.bit_offset_reg == x86::kNoReg ? -1 : i->insn.bit_offset_reg;
}
int kjit_insn_writes_nothing(const kjit_insn *i) {
  const x86::Insn &in = i->insn;
  return !in.regs_modified && !in.flags_modified && !in.mem_written && in.cf == KJIT_CF_NONE &&
         in.nondet == KJIT_NONDET_NONE && !in.swaps_gs;
}
uint32_t kjit_insn_mnemonic(const kjit_insn *i) { return i->insn.mnemonic; }
int kjit_insn_is_memory_hint(const kjit_insn *i) { return arch::is_memory_hint(i->insn); }
enum kjit_string_op kjit_insn_string_op(const kjit_insn *i) { return arch::string_op(i->insn).op; }
uint32_t kjit_insn_string_width(const kjit_insn *i) { return arch::string_op(i->insn).width; }
enum kjit_nondet_kind kjit_insn_nondet_kind(const kjit_insn *i) {
  return static_cast<kjit_nondet_kind>(i->insn.nondet);
}
int kjit_insn_nondeterministic_reg(const kjit_insn *i) { return x86::nondet_result_reg(i->insn); }
int kjit_insn_gs_swapped(const kjit_insn *i, enum kjit_ipoint where) {
  const BuildContext &ctx = *i->ctx;
  // Edges of a conditional branch run after it, with the state before it.
  const uint32_t at = where == KJIT_IPOINT_AFTER ? i->index + 1 : i->index;
  return at <= ctx.n && ctx.gs_swapped[at];
}
int kjit_insn_reads_memory(const kjit_insn *i) { return i->insn.mem_read; }
int kjit_insn_writes_memory(const kjit_insn *i) { return i->insn.mem_written; }
uint32_t kjit_insn_memory_size(const kjit_insn *i) { return i->insn.mem_size; }
enum kjit_segment kjit_insn_mem_segment(const kjit_insn *i) {
  return static_cast<kjit_segment>(i->insn.mem_segment);
}
int kjit_insn_mem_on_stack(const kjit_insn *i) { return i->insn.has_mem_operand && i->insn.mem_uses_rsp; }
int kjit_insn_modifies_flags(const kjit_insn *i) { return (i->insn.flags_modified & x86::kAllArithFlags) != 0; }

uint64_t kjit_block_pc(const kjit_block *b) { return b->ctx->pc; }
uint32_t kjit_block_insn_count(const kjit_block *b) { return b->ctx->n; }
struct kjit_insn *kjit_block_insn(kjit_block *b, uint32_t index) {
  return index < b->ctx->n ? &b->ctx->insns[index] : nullptr;
}
int kjit_block_is_routine_start(const kjit_block *b) { return b->ctx->routine_start; }
int kjit_block_runs_with_previous(const kjit_block *b) { return b->ctx->run_link == RunLink::kAlways; }
int kjit_block_runs_unless_previous_taken(const kjit_block *b) { return b->ctx->run_link == RunLink::kUnlessTaken; }
int kjit_block_may_lead_run(const kjit_block *b) { return b->ctx->may_lead_run; }
uint32_t kjit_block_cache_half(const kjit_block *b) { return b->ctx->cache_half; }

namespace {

int insert_request(kjit_insn *insn, enum kjit_ipoint where, void *routine, uint32_t nargs,
                   const kjit_arg *args, kjit_arg guard, bool context = false) {
  if (!insn || !routine || nargs > KJIT_MAX_ARGS || (nargs && !args)) return kEINVAL;
  BuildContext &ctx = *insn->ctx;
  if (insn->index >= ctx.n || &ctx.insns[insn->index] != insn) return kEINVAL;
  bool is_last = insn->index + 1 == ctx.n && ctx.has_terminator();
  if (!ipoint_valid_for(insn->insn, where, is_last)) return kEINVAL;
  if (kjit_insn_gs_swapped(insn, where)) return kEPERM;
  for (uint32_t i = 0; i < nargs; i++) {
    if (!arg_valid(args[i])) return kEINVAL;
    bool mem_arg = args[i].kind == KJIT_ARG_KIND_MEM_EA || args[i].kind == KJIT_ARG_KIND_MEM_SIZE;
    // The operand's address is only defined before the instruction runs.
    if (mem_arg && (!insn->insn.has_mem_operand || where != KJIT_IPOINT_BEFORE)) return kEINVAL;
  }
  if (ctx.nreqs >= kMaxRequests) {
    ctx.rejected_requests++;
    return kENOSPC;
  }
  CallRequest &r = ctx.reqs[ctx.nreqs++];
  r.insn_index = insn->index;
  r.where = static_cast<uint8_t>(where);
  // A block-level request may be placed anywhere in the block where less
  // state is live (every instruction of a dynamic block runs if one does).
  // Requests reading flags or registers are bound to their point.
  r.movable = ctx.in_block_callback && where == KJIT_IPOINT_BEFORE && !context;
  r.context = context;
  for (uint32_t i = 0; i < nargs; i++)
    if (args[i].kind == KJIT_ARG_KIND_REG || args[i].kind == KJIT_ARG_KIND_FLAGS ||
        args[i].kind == KJIT_ARG_KIND_INSN_PC || args[i].kind == KJIT_ARG_KIND_BRANCH_TARGET ||
        args[i].kind == KJIT_ARG_KIND_MEM_EA)
      r.movable = 0;
  r.routine = routine;
  r.nargs = nargs;
  for (uint32_t i = 0; i < nargs; i++) r.args[i] = args[i];
  r.guard = guard;
  return 0;
}

}  // namespace

int kjit_insert_call_argv(kjit_insn *insn, enum kjit_ipoint where, void *routine, uint32_t nargs,
                          const kjit_arg *args) {
  return insert_request(insn, where, routine, nargs, args, kjit_arg{});
}

int kjit_insert_context_call(kjit_insn *insn, enum kjit_ipoint where, kjit_context_routine routine) {
  return insert_request(insn, where, reinterpret_cast<void *>(routine), 0, nullptr, kjit_arg{}, true);
}

int kjit_insert_call_if(kjit_insn *insn, enum kjit_ipoint where, kjit_arg guard, void *routine,
                        uint32_t nargs, ...) {
  if (nargs > KJIT_MAX_ARGS) return kEINVAL;
  if (guard.kind != KJIT_ARG_KIND_PTR && guard.kind != KJIT_ARG_KIND_PERCPU) return kEINVAL;
  kjit_arg args[KJIT_MAX_ARGS];
  va_list ap;
  va_start(ap, nargs);
  for (uint32_t i = 0; i < nargs; i++) args[i] = va_arg(ap, kjit_arg);
  va_end(ap);
  return insert_request(insn, where, routine, nargs, args, guard);
}

int kjit_insert_call(kjit_insn *insn, enum kjit_ipoint where, void *routine, uint32_t nargs, ...) {
  if (nargs > KJIT_MAX_ARGS) return kEINVAL;
  kjit_arg args[KJIT_MAX_ARGS];
  va_list ap;
  va_start(ap, nargs);
  for (uint32_t i = 0; i < nargs; i++) args[i] = va_arg(ap, kjit_arg);
  va_end(ap);
  return kjit_insert_call_argv(insn, where, routine, nargs, args);
}


void *kjit_alloc(uint64_t size) {
  EngineState &g = g_engine;
  if (!g.initialized || size == 0) return nullptr;
  // From a plugin callback the lock is already held by this CPU (the lock
  // disables preemption, so the CPU number is stable).
  if (g.callback_cpu == static_cast<int32_t>(kjit_os_cpu())) return data_alloc_locked(size);
  EngineLock lock;
  return data_alloc_locked(size);
}

static void count_callbacks_locked() {
  EngineState &g = g_engine;
  uint32_t on_entry = 0, on_exit = 0;
  for (uint32_t i = 0; i < g.nplugins; i++) {
    on_entry += g.plugins[i]->on_entry != nullptr;
    on_exit += g.plugins[i]->on_exit != nullptr;
  }
  __atomic_store_n(&g.entry_callbacks, on_entry, __ATOMIC_RELEASE);
  __atomic_store_n(&g.exit_callbacks, on_exit, __ATOMIC_RELEASE);
}

int kjit_register_plugin(const kjit_plugin *plugin) {
  EngineState &g = g_engine;
  if (!plugin) return kEINVAL;
  {
    EngineLock lock;
    for (uint32_t i = 0; i < g.nplugins; i++)
      if (g.plugins[i] == plugin) return kEBUSY;
    if (g.nplugins >= kMaxPlugins) return kENOSPC;
    g.plugins[g.nplugins++] = plugin;
    count_callbacks_locked();
  }
  // Everything translated so far lacks this plugin's instrumentation.
  kjit_engine_flush();
  return 0;
}

int kjit_unregister_plugin(const kjit_plugin *plugin) {
  EngineState &g = g_engine;
  {
    EngineLock lock;
    uint32_t i = 0;
    while (i < g.nplugins && g.plugins[i] != plugin) i++;
    if (i == g.nplugins) return kEINVAL;
    for (; i + 1 < g.nplugins; i++) g.plugins[i] = g.plugins[i + 1];
    g.nplugins--;
    count_callbacks_locked();
  }
  kjit_engine_flush();
  return 0;
}

}  // extern "C"
