// SPDX-License-Identifier: GPL-2.0
#include "arch/instrumentation.h"

#include "arch/arch.h"
#include "core/engine_state.h"
#include "core/percpu_data.h"

namespace kjit {
namespace {

using x86::kCallerSaved;
using x86::kSysvArgRegs;
constexpr uint8_t kNoSource = 0xff;
constexpr uint8_t kFlagsSource = 0xfe;  // "register" standing for rflags
constexpr uint8_t kMemEaSource = 0xfd;  // the memory operand's effective address

// Not __builtin_popcount: without -mpopcnt it becomes a libgcc call, and
// the module links no libgcc.
uint32_t popcount16(uint16_t v) {
  uint32_t n = 0;
  for (; v; v &= static_cast<uint16_t>(v - 1)) n++;
  return n;
}

// Plugin pointers name host memory; translated code must see the exec view.
uint64_t to_exec_pointer(uint64_t p) {
  const kjit_os_memory &m = g_engine.mem;
  uint64_t host = reinterpret_cast<uint64_t>(m.data_host_view);
  if (p >= host && p < host + m.data_size) return m.data_exec_base + (p - host);
  return p;
}

}  // namespace

void Instrumenter::resolve_args(const CallRequest &req, const x86::Insn &insn, InlineArgs *args,
                                uint8_t *src_reg) {
  __builtin_memset(args, 0, sizeof(*args));
  args->nargs = req.nargs;
  for (uint32_t i = 0; i < req.nargs; i++) {
    const kjit_arg &a = req.args[i];
    src_reg[i] = kNoSource;
    args->is_const[i] = 1;
    switch (a.kind) {
      case KJIT_ARG_KIND_CONST: args->value[i] = a.value; break;
      case KJIT_ARG_KIND_PTR:
        // Per-CPU data is addressed gs-relative, everything else absolute.
        if (percpu_gs_address(a.value, &args->value[i])) args->is_percpu[i] = 1;
        else args->value[i] = to_exec_pointer(a.value);
        break;
      case KJIT_ARG_KIND_PERCPU:
        args->value[i] = a.value;
        args->is_percpu[i] = 1;
        break;
      case KJIT_ARG_KIND_INSN_PC: args->value[i] = insn.pc; break;
      case KJIT_ARG_KIND_BLOCK_PC: args->value[i] = g_build.pc; break;
      case KJIT_ARG_KIND_BRANCH_TARGET:
        if (insn.target && insn.cf != KJIT_CF_CALL_INDIRECT && insn.cf != KJIT_CF_JMP_INDIRECT) {
          args->value[i] = insn.target;
        } else if (insn.indirect_reg != x86::kNoReg) {
          args->is_const[i] = 0;
          src_reg[i] = insn.indirect_reg;
        } else {
          args->value[i] = 0;  // a return or memory-indirect target is not known here
        }
        break;
      case KJIT_ARG_KIND_REG:
        args->is_const[i] = 0;
        src_reg[i] = static_cast<uint8_t>(a.reg & 15);
        break;
      case KJIT_ARG_KIND_FLAGS:
        args->is_const[i] = 0;
        src_reg[i] = kFlagsSource;
        break;
      case KJIT_ARG_KIND_MEM_EA:
        if (insn.rip_disp_offset) {
          args->value[i] = insn.target;  // RIP-relative: known at translation
        } else {
          args->is_const[i] = 0;
          src_reg[i] = kMemEaSource;
        }
        break;
      case KJIT_ARG_KIND_MEM_SIZE:
        args->value[i] = insn.mem_size;
        break;
      default: args->value[i] = 0; break;
    }
  }
}

const InlinedCode *Instrumenter::specialise(const CallRequest &req, const x86::Insn &insn) {
  if (!g_engine.opt.inline_instrumentation) return nullptr;
  InlineArgs args;
  uint8_t src[KJIT_MAX_ARGS];
  resolve_args(req, insn, &args, src);
  return epoch_->inline_cache.get(g_engine.decoder, req.routine, args,
                                  g_engine.routines_in_same_space());
}

SaveCost Instrumenter::cost(const CallRequest &req, const x86::Insn &insn, LiveSet live) {
  if (req.context) return {1, 16};  // everything, live or not
  const InlinedCode *code = specialise(req, insn);
  if (!code) return {1, popcount16(kCallerSaved & live.regs)};
  uint16_t clobber = code->clobbered_regs | code->needs_arg_regs;
  uint8_t map[16];
  const uint16_t moved = g_engine.opt.use_liveness ? arch::rename_targets(*code, live.regs, map) : 0;
  return {(code->flags_written & live.flags) ? 1u : 0u, popcount16(clobber & live.regs & ~moved)};
}

// Puts non-constant arguments (register values as they were before the
// instrumentation) into their argument registers.  Pushing every source
// first and popping into the destinations makes any permutation safe.
// push rax; lea rax, [operand]; xchg rax, [rsp]: pushes the address the
// instruction is about to access, without touching flags or registers.
// `below` is how far rsp has moved since the instruction's own state.
void Instrumenter::push_effective_address(uint32_t below) {
  uint8_t enc[15];
  // rsp has moved down by `below` plus our own push of rax.
  const uint32_t len = arch::encode_operand_address(*insn_, KJIT_REG_RAX, below + 8, enc);
  w_->push_reg(KJIT_REG_RAX);
  if (len) {
    w_->bytes(enc, len);
  } else {
    w_->mov_reg_imm(KJIT_REG_RAX, 0);  // not expressible: report address 0
  }
  w_->xchg_reg_rsp_slot(KJIT_REG_RAX);
}

void Instrumenter::load_reg_args(const InlineArgs &args, const uint8_t *src_reg, uint32_t pushed) {
  uint32_t order[KJIT_MAX_ARGS];
  uint32_t n = 0;
  for (uint32_t i = 0; i < args.nargs; i++) {
    if (args.is_const[i] || src_reg[i] == KJIT_REG_RSP) continue;
    if (src_reg[i] == kFlagsSource) w_->pushfq();
    else if (src_reg[i] == kMemEaSource) push_effective_address(pushed + 8 * n);
    else w_->push_reg(src_reg[i]);
    order[n++] = i;
  }
  while (n-- > 0) w_->pop_reg(static_cast<uint8_t>(kSysvArgRegs[order[n]]));
  for (uint32_t i = 0; i < args.nargs; i++) {
    if (!args.is_const[i] && src_reg[i] == KJIT_REG_RSP)
      w_->lea_reg_reg_disp(static_cast<uint8_t>(kSysvArgRegs[i]), KJIT_REG_RSP,
                           static_cast<int32_t>(pushed));
  }
}

// Saves flags (outermost) and registers; returns the bytes pushed.
uint32_t Instrumenter::save(SavedState st) {
  uint32_t pushed = 0;
  if (st.flags) {
    w_->pushfq();
    pushed += 8;
  }
  for (uint32_t r = 0; r < 16; r++)
    if (st.regs >> r & 1) {
      w_->push_reg(static_cast<uint8_t>(r));
      pushed += 8;
    }
  return pushed;
}

void Instrumenter::restore(SavedState st) {
  for (uint32_t r = 16; r-- > 0;)
    if (st.regs >> r & 1) w_->pop_reg(static_cast<uint8_t>(r));
  if (st.flags) w_->popfq();
}

// add reg, gs:[percpu_self]: a gs-relative address becomes this CPU's.
void Instrumenter::add_percpu_base(uint8_t reg) {
  const uint64_t self = g_engine.mem.percpu_self;
  const uint32_t disp = static_cast<uint32_t>(self);
  const uint8_t insn[] = {0x65, static_cast<uint8_t>(0x48 | (reg >= 8 ? 4 : 0)), 0x03,
                          static_cast<uint8_t>(0x04 | (reg & 7) << 3), 0x25,
                          static_cast<uint8_t>(disp), static_cast<uint8_t>(disp >> 8),
                          static_cast<uint8_t>(disp >> 16), static_cast<uint8_t>(disp >> 24)};
  w_->bytes(insn, sizeof(insn));
}

// The routine itself where plugins share the translated code's address
// space (the kernel), else the host's gate that calls it (0: none left).
uint64_t Instrumenter::routine_target(const CallRequest &req) const {
  const uint64_t fn = reinterpret_cast<uint64_t>(req.routine);
  if (g_engine.routines_in_same_space()) return fn;
  return req.context ? kjit_os_host_context_gate(fn) : kjit_os_host_call_gate(fn);
}

// Reach is checked first: a failed rel32 call leaves its `e8` behind, a
// call to the next instruction that would push a stray return address.
void Instrumenter::call_routine(uint64_t target) {
  if (x86::fits_i32(static_cast<int64_t>(target - (w_->here() + 5)))) {
    w_->call(target);
    return;
  }
  // Out of rel32 reach: call through an inline slot (no register needed).
  static const uint8_t kCallSlot[] = {0xff, 0x15, 0x02, 0, 0, 0, 0xeb, 0x08};
  w_->bytes(kCallSlot, sizeof(kCallSlot));
  w_->u64(target);
}

void Instrumenter::emit_outlined(const CallRequest &req, const InlineArgs &args,
                                 const uint8_t *src_reg, LiveSet live) {
  const uint64_t target = routine_target(req);
  bool percpu_ok = true;
  for (uint32_t i = 0; i < args.nargs; i++)
    if (args.is_percpu[i] && (!g_engine.mem.percpu_self || !x86::fits_simm32(g_engine.mem.percpu_self)))
      percpu_ok = false;
  if (target == 0 || !percpu_ok) {
    // The host has no way to call this routine (its gates are exhausted),
    // or to tell it this CPU's copy of its per-CPU data: leave the call out
    // rather than emit a call to nowhere or to another CPU's data.
    g_engine.stats.fallbacks++;
    return;
  }
  bool liveness = g_engine.opt.use_liveness;
  SavedState st{static_cast<uint16_t>(liveness ? (kCallerSaved & live.regs) : kCallerSaved),
                !liveness || live.flags != 0};
  load_reg_args(args, src_reg, save(st));
  // This CPU's copy is computed before the call and written by the routine:
  // the task must not move to another CPU in between (preempted by an
  // interrupt under preempt=full), or it would add to the other CPU's copy
  // while that CPU adds to it too.  Interrupts stay off from the address to
  // the routine's return (routines never sleep); the arguments read from
  // the program's state are loaded before, with its flags as they were.
  bool pin_cpu = false;
  for (uint32_t i = 0; i < args.nargs; i++) pin_cpu |= args.is_percpu[i] != 0;
  if (pin_cpu) {
    w_->pushfq();
    w_->byte(0xfa);  // cli
  }
  for (uint32_t i = 0; i < args.nargs; i++) {
    if (!args.is_const[i]) continue;
    const uint8_t reg = static_cast<uint8_t>(kSysvArgRegs[i]);
    w_->mov_reg_imm(reg, args.value[i]);
    // A called routine cannot use gs: give it this CPU's copy.  Flags are
    // saved above whenever they are live.
    if (args.is_percpu[i]) add_percpu_base(reg);
  }
  call_routine(target);
  if (pin_cpu) w_->popfq();  // interrupts as they were
  restore(st);
  g_engine.stats.outlined_calls++;
}

// cmp byte [guard], 0, for a kjit_insert_call_if guard: gs-relative for
// per-CPU data, absolute otherwise; through rax (saved, flag-free) when the
// address does not fit a disp32.  Writes the flags.
void Instrumenter::emit_guard_compare(const kjit_arg &guard) {
  uint64_t addr = guard.value;
  bool gs = guard.kind == KJIT_ARG_KIND_PERCPU;
  if (guard.kind == KJIT_ARG_KIND_PTR) gs = percpu_gs_address(guard.value, &addr);
  if (guard.kind == KJIT_ARG_KIND_PTR && !gs) addr = to_exec_pointer(guard.value);
  if (x86::fits_simm32(addr)) {
    const uint32_t d = static_cast<uint32_t>(addr);
    const uint8_t cmp[] = {0x80, 0x3c, 0x25, static_cast<uint8_t>(d), static_cast<uint8_t>(d >> 8),
                           static_cast<uint8_t>(d >> 16), static_cast<uint8_t>(d >> 24), 0x00};
    if (gs) w_->byte(0x65);
    w_->bytes(cmp, sizeof(cmp));
    return;
  }
  w_->push_reg(KJIT_REG_RAX);
  w_->mov_reg_imm(KJIT_REG_RAX, addr);
  if (gs) w_->byte(0x65);
  static const uint8_t cmp_rax[] = {0x80, 0x38, 0x00};  // cmp byte [rax], 0
  w_->bytes(cmp_rax, sizeof(cmp_rax));
  w_->pop_reg(KJIT_REG_RAX);
}

void Instrumenter::emit(const CallRequest &req, const x86::Insn &insn, LiveSet live) {
  if (!req.guard.kind) {
    emit_call(req, insn, live);
    return;
  }
  // [pushfq] cmp byte [guard], 0; je skip; [popfq] call...; [jmp done;
  // skip: popfq]; done:
  const bool flags = !g_engine.opt.use_liveness || live.flags != 0;
  if (flags) w_->pushfq();
  emit_guard_compare(req.guard);
  const int32_t skip = w_->jcc(0x4, w_->here());
  if (flags) w_->popfq();
  emit_call(req, insn, live);
  if (skip < 0) return;  // out of room: the block is abandoned anyway
  if (flags) {
    const int32_t done = w_->jmp(w_->here());
    w_->patch_rel32(static_cast<uint32_t>(skip), w_->here());
    w_->popfq();
    if (done >= 0) w_->patch_rel32(static_cast<uint32_t>(done), w_->here());
  } else {
    w_->patch_rel32(static_cast<uint32_t>(skip), w_->here());
  }
}

void Instrumenter::emit_call(const CallRequest &req, const x86::Insn &insn, LiveSet live) {
  if (req.context) {
    emit_context_call(req, insn);
    return;
  }
  insn_ = &insn;
  InlineArgs args;
  uint8_t src[KJIT_MAX_ARGS];
  resolve_args(req, insn, &args, src);
  const InlinedCode *code = specialise(req, insn);
  if (!code) {
    emit_outlined(req, args, src, live);
    return;
  }
  bool liveness = g_engine.opt.use_liveness;
  if (liveness && (code->renamable_regs & live.regs)) {
    // Registers dead here instead of live ones it would have to save.
    const InlinedCode *renamed = arch::rename_inlined_registers(*code, live.regs);
    if (renamed) {
      code = renamed;
      g_engine.stats.renamed_inlines++;
    }
  }
  uint16_t clobber = code->clobbered_regs | code->needs_arg_regs;
  SavedState st{liveness ? static_cast<uint16_t>(clobber & live.regs) : clobber,
                code->flags_written && (!liveness || (code->flags_written & live.flags))};
  load_reg_args(args, src, save(st));
  w_->bytes(code->code, code->size);
  restore(st);
  g_engine.stats.inlined_calls++;
}

}  // namespace kjit
