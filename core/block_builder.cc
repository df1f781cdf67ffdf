// SPDX-License-Identifier: GPL-2.0
#include "core/block_builder.h"

#include "arch/instrumentation.h"
#include "core/code_reader.h"
#include "core/decode_cache.h"
#include "core/departures.h"
#include "core/engine_state.h"
#include "core/indirect_chain.h"
#include "core/linker.h"
#include "core/trace.h"

namespace kjit {

constinit BuildContext g_build{};

namespace {

// Where a function's fentry site can be: a block's first instruction, or
// the one after a first ENDBR (endbr64, or the 4-byte NOP the kernel
// writes over a sealed one).  Only those are asked about (the host's
// lookup is not free).
bool at_function_entry(const BuildContext &ctx) {
  if (ctx.n == 0) return true;
  return ctx.n == 1 && arch::is_entry_marker(ctx.insns[0].insn);
}


bool enters_foreign_code(const x86::Insn &in);

// What an fentry site met inside a block looks like (a function entered
// by falling into it from padding): a 5-byte NOP, or a call of another
// tool's code.  Only those are asked about there.
bool may_be_fentry_site(const x86::Insn &in) {
  return in.length == 5 && (in.is_nop || (in.cf == KJIT_CF_CALL && enters_foreign_code(in)) || in.cf == KJIT_CF_FENTRY);
}

constexpr uint32_t kBlockSlack = 64;

// RIP-relative operands must reach their target from anywhere in the cache.
bool reachable_from_cache(uint64_t target) {
  const Epoch &e = g_engine.epoch();
  return arch::pc_relative_reaches(e.code_exec, target) && arch::pc_relative_reaches(e.code_exec + e.code_size, target);
}

// Whether a decoded instruction ends the block before itself and sends
// execution to native code at its address.
bool must_run_natively(const x86::Insn &in, kjit_os_site_kind site) {
  if (site == KJIT_SITE_BUG) return true;  // WARN/BUG ud2: reported at its own address
  switch (in.cf) {
    case KJIT_CF_TRAP:
    case KJIT_CF_SYSTEM:
      return true;
    case KJIT_CF_RET:
      return in.ret_imm != 0;
    case KJIT_CF_JMP_INDIRECT:
    case KJIT_CF_CALL_INDIRECT:
      return in.indirect_reg == x86::kNoReg;  // through memory
    default:
      break;
  }
  if (in.rip_disp_offset && !reachable_from_cache(in.target)) return true;
  return false;
}

// A direct branch into code that is not text (kjit_os_is_text): another
// tool's trampoline or probe buffer, which its owner frees when it goes
// away.  Copying or linking the branch would keep a jump there in the
// cache; the instruction runs natively at its own address instead, where
// it always goes wherever the live text says.  A live fentry site that an
// ftrace user (function tracer, kprobe, BPF trampoline, livepatch) enabled
// is such a call, and running it natively is what makes that tool see the
// call.
bool enters_foreign_code(const x86::Insn &in) {
  switch (in.cf) {
    case KJIT_CF_CALL:
    case KJIT_CF_JMP:
    case KJIT_CF_JCC:
    case KJIT_CF_FENTRY:
      return !kjit_os_is_text(in.target);
    default:
      return false;
  }
}

void run_plugins(BuildContext &ctx) {
  g_engine.callback_cpu = static_cast<int32_t>(kjit_os_cpu());
  for (uint32_t p = 0; p < g_engine.nplugins; p++) {
    const kjit_plugin *pl = g_engine.plugins[p];
    ctx.in_block_callback = 1;
    if (pl->on_block) pl->on_block(&ctx.block, pl->arg);
    if (ctx.routine_start && pl->on_routine) pl->on_routine(&ctx.block, pl->arg);
    ctx.in_block_callback = 0;
    if (pl->on_insn)
      for (uint32_t i = 0; i < ctx.n; i++) pl->on_insn(&ctx.insns[i], pl->arg);
  }
  g_engine.callback_cpu = -1;
}

// The block the plugins saw last will not run (kjit_plugin::on_block_dropped).
void drop_for_plugins(BuildContext &ctx) {
  g_engine.callback_cpu = static_cast<int32_t>(kjit_os_cpu());
  for (uint32_t p = 0; p < g_engine.nplugins; p++) {
    const kjit_plugin *pl = g_engine.plugins[p];
    if (pl->on_block_dropped) pl->on_block_dropped(&ctx.block, pl->arg);
  }
  g_engine.callback_cpu = -1;
}

// A block-level request may go before any instruction of the block: put it
// where the fewest registers and flags are live.
void place_movable_requests(BuildContext &ctx, Instrumenter &ins) {
  for (uint32_t r = 0; r < ctx.nreqs; r++) {
    CallRequest &req = ctx.reqs[r];
    if (!req.movable || !g_engine.opt.use_liveness) continue;
    uint32_t best = req.insn_index, best_weight = ~0u;
    for (uint32_t i = 0; i < ctx.n; i++) {
      if (ctx.insns[i].is_extable_site) break;  // keep counts ahead of faulting user accesses
      if (ctx.gs_swapped[i]) continue;           // no call with the user's GS base
      uint32_t w = ins.cost(req, ctx.insns[i].insn, ctx.live[i]).weight();
      if (w < best_weight) {
        best_weight = w;
        best = i;
      }
      if (w == 0) break;
    }
    req.insn_index = best;
  }
}

// Bytes emit_stubs writes for `plan`.
uint32_t stub_bytes(const Epoch &epoch, const ExitPlan &plan) {
  uint32_t n = plan.nexits * arch::kStubSize;
  if (plan.chain) {
    uint32_t lead = return_fallback_size(*plan.chain);
    n += (epoch.ibl_routine ? lead + arch::kIblPreludeSize : 0) + lead + arch::kStubSize;
  }
  return n;
}

class Emitter {
 public:
  Emitter(Epoch &epoch, BuildContext &ctx, CodeWriter &w, Block *b)
      : epoch_(epoch), ctx_(ctx), w_(w), b_(b), ins_(&epoch, &w) {}

  bool emit_body();
  bool emit_terminator();
  bool emit_fixups();
  ExitPlan plan{};
  uint32_t extable_failed_at = ~0u;
  bool extable_retry_later = false;  // the host may mirror it another time
  bool out_of_arena = false;

 private:
  void requests_at(uint32_t index, uint8_t where, LiveSet live) {
    for (uint32_t r = 0; r < ctx_.nreqs; r++)
      if (ctx_.reqs[r].insn_index == index && ctx_.reqs[r].where == where)
        ins_.emit(ctx_.reqs[r], ctx_.insns[index].insn, live);
  }
  bool has_requests(uint32_t index, uint8_t where) const {
    for (uint32_t r = 0; r < ctx_.nreqs; r++)
      if (ctx_.reqs[r].insn_index == index && ctx_.reqs[r].where == where) return true;
    return false;
  }
  void map_range(uint32_t offset, uint32_t length, uint64_t pc) {
    b_->pcmap[b_->npcmap++] = {offset, static_cast<uint16_t>(length), 0,
                               static_cast<uint32_t>(pc - ctx_.pc)};
  }
  // A call's push of the original return address is the call's own write.
  void push_return_address(const x86::Insn &in) {
    uint32_t at = w_.size();
    arch::emit_push_imm(w_, in.pc + in.length);
    map_range(at, w_.size() - at, in.pc);
  }
  Exit *new_exit(uint64_t target, bool is_call);
  // A jmp (or jcc) toward `target`, linked later through a stub.
  void exit_jump(uint64_t target, bool is_call, int cond = -1);
  // The jmp that ends the block on a path that always takes it, or
  // (`always` false) on the path after a condition the block tests last.
  void tail_jump(uint64_t target, bool is_call, bool always = true) {
    uint32_t at = w_.size(), n = plan.nexits;
    exit_jump(target, is_call);
    if (plan.nexits != n + 1) return;  // out of arena: a far jmp, not an exit
    plan.tail = plan.exits[n];
    plan.tail_at = at;
    plan.tail_end = w_.size();
    plan.tail_always = always;
  }
  // Leaves the cache for native code at `target`, counting the departure.
  void exit_native(uint64_t target, kjit_departure why);
  // `as_return`: the site is a return even if `in` is not (a tail jump to a
  // leaf called natively returns through it).
  void indirect_site(const x86::Insn &in, bool as_return = false);
  // A `ret` to the known return address `to` (indirect_chain.h).
  void predicted_return(const x86::Insn &in, uint64_t to);
  // At an fentry site (decode_block: live_fentry): goes on when its live
  // first byte is a NOP's, else runs natively from the site (a hooked
  // departure: the tool that switched it on sees the call).
  bool fentry_check(const x86::Insn &in, const LiveSet &live);

  Epoch &epoch_;
  BuildContext &ctx_;
  CodeWriter &w_;
  Block *b_;
  Instrumenter ins_;
  // ctx_.mirrors[0 .. nmirrors_): the copied user accesses so far
  uint32_t nmirrors_ = 0;
  uint32_t nfixups_ = 0;  // of them with a fixup_pc
};

Exit *Emitter::new_exit(uint64_t target, bool is_call) {
  Exit *e = epoch_.arena.alloc_array<Exit>(1);
  if (!e || plan.nexits >= kMaxExits) return nullptr;
  e->target_pc = target;
  e->is_call = is_call;
  e->call_return = ctx_.predicted_return;  // the frame's, in a trace's copy of a callee
  plan.exits[plan.nexits++] = e;
  return e;
}

void Emitter::exit_jump(uint64_t target, bool is_call, int cond) {
  Exit *e = new_exit(target, is_call);
  if (!e) {
    // Out of arena: leave to native code (still correct).
    emit_departure_count(w_, target, KJIT_DEPART_CACHE_FULL, true);
    arch::emit_jump_anywhere(w_, target);
    return;
  }
  // Linking re-points this jump while other CPUs may run the block.
  int32_t field = arch::emit_exit_jump(w_, cond);
  e->field_offset = b_->code_offset + static_cast<uint32_t>(field < 0 ? 0 : field);
}

void Emitter::exit_native(uint64_t target, kjit_departure why) {
  emit_departure_count(w_, target, why, true);
  arch::emit_jump_anywhere(w_, target);
}

void Emitter::indirect_site(const x86::Insn &in, bool as_return) {
  ChainSite *site = epoch_.arena.alloc_array<ChainSite>(1);
  if (!site) {
    out_of_arena = true;
    return;
  }
  site->owner = b_;
  site->is_call = in.cf == KJIT_CF_CALL_INDIRECT;
  site->is_return = in.cf == KJIT_CF_RET || as_return;
  // A leaf called in place of a tail jump (as_return) keeps the general
  // site: the return is the leaf's, which may be assembly.
  site->abi_return = in.cf == KJIT_CF_RET && g_engine.opt.abi_returns && kjit_os_c_abi_return(in.pc);
  if (site->is_return) {
    emit_return_site(w_, b_->code_offset, site);
  } else {
    int32_t field = arch::emit_exit_jump(w_, -1);  // re-pointed by chain_append
    site->tail_field = b_->code_offset + static_cast<uint32_t>(field < 0 ? 0 : field);
  }
  plan.chain = site;
}

void Emitter::predicted_return(const x86::Insn &in, uint64_t to) {
  if (!g_engine.is_stop(to) && return_slot_untouched(in)) {
    arch::emit_pop_return_slot(w_);
    tail_jump(to, false);
    if (plan.tail) plan.tail->call_return = 0;  // back in the caller's frame
    plan.predicted = 1;
    plan.predicted_return = plan.tail != nullptr;
    plan.unchecked = 1;
    return;
  }
  LiveSet at = g_engine.opt.use_liveness ? live_in_at(g_engine.decoder, to) : LiveSet::all();
  // A stop address is returned to with a real `ret` (the return-stack
  // predictor pairs it with the native call that entered).
  int32_t rel8 = g_engine.is_stop(to) ? -1
                                      : emit_predicted_return(w_, to, !(at.flags & x86::kAllArithFlags),
                                                              !(at.regs & (1u << KJIT_REG_RCX)));
  indirect_site(in);
  if (rel8 < 0 || w_.overflowed() || out_of_arena) return;
  if (!arch::land_rel8(w_, static_cast<uint32_t>(rel8))) {
    // Cannot happen (a return site is under 64 bytes); if it did, the
    // build would fail as on a full arena rather than jump astray.
    out_of_arena = true;
    return;
  }
  arch::emit_drop_return_slot(w_);
  tail_jump(to, false, /*always=*/false);  // after the compare
  if (plan.tail) plan.tail->call_return = 0;  // back in the caller's frame
  plan.predicted = 1;
  plan.predicted_return = plan.tail != nullptr;
}

bool Emitter::fentry_check(const x86::Insn &in, const LiveSet &live) {
  // Flags are dead at a compiled function's entry; saved where the
  // analysis says otherwise (assembly).
  const bool save_flags = (live.flags & x86::kAllArithFlags) != 0;
  const int32_t rel8_at = arch::emit_fentry_check(w_, in.pc, save_flags);
  if (rel8_at == -1) return true;  // the build fails on the overflow
  if (rel8_at < 0) return false;
  // Hooked: to the site, natively.  Counted from its first run on
  // (Exit::native_why), so a check that never fires costs no departure site.
  if (Exit *e = new_exit(in.pc, false)) {
    e->native_why = static_cast<uint8_t>(KJIT_DEPART_HOOKED + 1);
    int32_t field = arch::emit_exit_jump(w_, -1);
    e->field_offset = b_->code_offset + static_cast<uint32_t>(field < 0 ? 0 : field);
  } else {
    exit_native(in.pc, KJIT_DEPART_HOOKED);
  }
  if (w_.overflowed()) return true;
  // An exit is a few dozen bytes: a rel8 reaches past it.
  return arch::emit_fentry_check_end(w_, static_cast<uint32_t>(rel8_at), save_flags);
}

bool Emitter::emit_body() {
  uint32_t last = ctx_.has_terminator() ? ctx_.n - 1 : ctx_.n;
  b_->pcmap = epoch_.arena.alloc_array<PcMapEntry>(ctx_.n);
  if (!b_->pcmap) return false;
  for (uint32_t i = 0; i < ctx_.n; i++) {
    const x86::Insn &in = ctx_.insns[i].insn;
    requests_at(i, KJIT_IPOINT_BEFORE, ctx_.live[i]);
    if (i == last) break;
    // A NOP has nothing to copy: padding, and the fentry site of a function
    // no ftrace user has enabled (one enabled later is not seen by a
    // translation made before, as it would not be in a copied NOP).
    if (in.is_nop) {
      if (ctx_.insns[i].live_fentry && !fentry_check(in, ctx_.live[i])) return false;
      requests_at(i, KJIT_IPOINT_AFTER, ctx_.live[i + 1]);
      continue;
    }
    uint64_t copy_at = w_.here();
    map_range(w_.size(), in.length, in.pc);
    if (!arch::emit_copy(w_, in)) return false;
    if (ctx_.insns[i].is_extable_site && !w_.overflowed()) {
      // A fault there goes on at the fixup's translation (emit_fixups), or
      // at the original fixup when the host cannot say where that is.
      uint64_t fixup = nfixups_ < kMaxExtableFixups ? kjit_os_extable_fixup(in.pc) : 0;
      nfixups_ += fixup ? 1 : 0;
      if (nmirrors_ < kMaxBlockInsns) ctx_.mirrors[nmirrors_++] = {i, copy_at, fixup};
    }
    requests_at(i, KJIT_IPOINT_AFTER, ctx_.live[i + 1]);
  }
  return !w_.overflowed();
}

bool Emitter::emit_terminator() {
  if (ctx_.early == EarlyEnd::kContinue) {
    tail_jump(ctx_.next_pc, false);
    return !w_.overflowed();
  }
  if (ctx_.ends_native()) {
    exit_native(ctx_.next_pc, ctx_.early == EarlyEnd::kHooked ? KJIT_DEPART_HOOKED : KJIT_DEPART_NATIVE_INSN);
    return !w_.overflowed();
  }
  const kjit_insn &ki = ctx_.insns[ctx_.n - 1];
  const x86::Insn &in = ki.insn;
  uint64_t fall = in.pc + in.length;
  LiveSet out = ctx_.live[ctx_.n];
  switch (in.cf) {
    case KJIT_CF_JCC: {
      bool taken_instr = has_requests(ki.index, KJIT_IPOINT_TAKEN);
      if (in.jcc_kind == x86::JccKind::kPlain) {
        // Compilers put the unlikely side of a branch out of line, behind
        // the taken edge: the not-taken side is the one a trace follows,
        // so it stays last.  Taken-edge code goes in between, hopped over
        // by the inverted condition.
        if (taken_instr) {
          const int32_t skip = arch::emit_branch_unless(w_, in.jcc_cond);
          requests_at(ki.index, KJIT_IPOINT_TAKEN, out);
          exit_jump(in.target, false);
          arch::land_jump(w_, skip);
        } else {
          exit_jump(in.target, false, in.jcc_cond);
        }
        requests_at(ki.index, KJIT_IPOINT_NOT_TAKEN, out);
        tail_jump(fall, false, /*always=*/false);
        plan.tail_not_taken = plan.tail != nullptr;
        break;
      }
      // loop/jrcxz only have rel8: hop over a short jmp to a rel32 one.
      // The short jmp's displacement is set once the taken exit (padded, or
      // a far jmp when the arena is full) has its final size: at most 14
      // bytes, always within rel8.
      int32_t local = -1;  // rel32 that must reach the taken-edge code
      const uint32_t skip_at = arch::emit_short_branch_hop(w_, in);
      if (taken_instr) local = arch::emit_jump_placeholder(w_);
      else exit_jump(in.target, false);
      if (!w_.overflowed()) arch::land_rel8(w_, skip_at);
      requests_at(ki.index, KJIT_IPOINT_NOT_TAKEN, out);
      if (taken_instr) exit_jump(fall, false);
      else tail_jump(fall, false, /*always=*/false);
      if (taken_instr) {
        arch::land_jump(w_, local);
        requests_at(ki.index, KJIT_IPOINT_TAKEN, out);
        exit_jump(in.target, false);
      }
      break;
    }
    case KJIT_CF_JMP:
      if (!kjit_os_may_translate(in.target) && !g_engine.is_stop(in.target) &&
          kjit_os_callable_natively(in.target)) {
        // A tail call of a leaf the OS lets us call as is (jmp memcpy):
        // call it, and its return into the cache is followed by the
        // return it would have made, translated.  The leaf sees its
        // arguments in registers and one more return address below the
        // caller's; registers, flags and memory after it are the same.
        if (!arch::emit_call(w_, in.target)) {
          exit_native(in.target, KJIT_DEPART_NATIVE_CALL);
          break;
        }
        g_engine.stats.native_calls++;
        indirect_site(in, true);
        break;
      }
      tail_jump(in.target, false);
      break;
    case KJIT_CF_CALL:
    case KJIT_CF_FENTRY:
      if (!kjit_os_may_translate(in.target) && !g_engine.is_stop(in.target) &&
          kjit_os_callable_natively(in.target)) {
        // A leaf the OS lets us call as is: it returns into the cache.
        if (!arch::emit_call(w_, in.target)) exit_native(in.pc, KJIT_DEPART_NATIVE_CALL);
        g_engine.stats.native_calls++;
        tail_jump(fall, false);
        break;
      }
      // The stack gets the ORIGINAL return address (transparency).
      push_return_address(in);
      if (in.target == g_engine.facts.schedule_funnel && g_engine.facts.gate_sched) {
        // The host follows the task through the sleep, or counts that it
        // does not.
        arch::emit_jump_anywhere(w_, g_engine.facts.gate_sched);
      } else if (!kjit_os_may_translate(in.target) || g_engine.is_stop(in.target)) {
        exit_native(in.target, KJIT_DEPART_NATIVE_CALL);
      } else {
        tail_jump(in.target, true);
        if (plan.tail) plan.call_return = plan.tail->call_return = fall;
      }
      break;
    case KJIT_CF_RET:
      // The return address stays where it is (indirect_chain.h).
      if (ctx_.predicted_return) predicted_return(in, ctx_.predicted_return);
      else indirect_site(in);
      break;
    case KJIT_CF_JMP_INDIRECT:
    case KJIT_CF_CALL_INDIRECT: {
      uint32_t pushed = 0;
      if (in.cf == KJIT_CF_CALL_INDIRECT) {
        push_return_address(in);
        pushed += 8;
      }
      arch::emit_indirect_target(w_, in.indirect_reg, pushed);
      indirect_site(in);
      break;
    }
    default:
      exit_native(in.pc, KJIT_DEPART_NATIVE_INSN);
      break;
  }
  return !w_.overflowed() && !out_of_arena;
}

// One exit per mirrored user access, toward its fixup: the mirror's fixup
// is that exit's jump, so a fault continues in the cache (through the
// dispatcher the first time, then linked).
bool Emitter::emit_fixups() {
  for (uint32_t k = 0; k < nmirrors_; k++) {
    const PendingMirror &m = ctx_.mirrors[k];
    uint64_t entry = 0;
    if (m.fixup_pc) {
      plan.tail = nullptr;  // its exit follows the tail
      entry = w_.here();
      exit_jump(m.fixup_pc, false);
      if (w_.overflowed()) return false;
    }
    int mirrored = kjit_os_mirror_extable(ctx_.insns[m.index].insn.pc, m.copy_at, entry);
    if (mirrored <= 0) {
      extable_failed_at = m.index;
      extable_retry_later = mirrored < 0;
      return false;
    }
  }
  return true;
}

// Points the rel32 at code-region offset `field` at `target`; the code is
// not published yet.
void set_rel32(Epoch &epoch, uint32_t field, uint64_t target) {
  arch::patch_jump(epoch.write_at(field), epoch.exec_at(field), target);
}

}  // namespace

bool return_slot_untouched(const x86::Insn &in) {
  return g_engine.opt.abi_returns && kjit_os_c_abi_return(in.pc);
}

bool emit_stubs(Epoch &epoch, CodeWriter &w, uint32_t base, const ExitPlan &plan) {
  const kjit_os_kernel_facts &f = g_engine.facts;
  for (uint32_t i = 0; i < plan.nexits; i++) {
    Exit *e = plan.exits[i];
    uint64_t stub = w.here();
    arch::emit_direct_stub(w, f.gate_direct, epoch.id_of(e));
    if (w.overflowed()) return false;
    set_rel32(epoch, e->field_offset, stub);
    e->stub_offset = static_cast<uint32_t>(stub - epoch.code_exec);
  }
  if (plan.chain) {
    ChainSite *c = plan.chain;
    // A return site's links leave the return address in place; the IBL
    // and the gate take the target in rcx and rcx in the slot.
    const uint32_t lead = return_fallback_size(*c);
    c->fallback = base + w.size();
    if (epoch.ibl_routine) {
      // IBL prelude: push the miss stub (right after it), probe the table.
      emit_return_fallback(w, *c);
      arch::emit_ibl_prelude(w, epoch.exec_at(c->fallback + lead + arch::kIblPreludeSize + lead),
                             epoch.exec_at(epoch.ibl_routine));
    }
    uint32_t gate_entry = base + w.size();
    emit_return_fallback(w, *c);
    c->miss_stub = base + w.size();
    arch::emit_direct_stub(w, f.gate_indirect, epoch.id_of(c));
    if (w.overflowed()) return false;
    // An empty chain goes to the gate, not the IBL: the IBL often holds the
    // first target already (a return site, a function entered before), and
    // a hit there would leave the chain empty for good, every execution
    // paying the shared routine.  The gate appends the first link; later
    // links' misses take the IBL first (chain_append).
    bool first_to_gate = epoch.ibl_routine && g_engine.opt.max_chain_length > 0;
    set_rel32(epoch, c->tail_field, epoch.exec_at(first_to_gate ? gate_entry : c->fallback));
  }
  return true;
}

namespace {

// emit_block once the plugins have seen the block.
BuildResult emit_instrumented(Epoch &epoch, uint64_t pc, bool routine_start, uint32_t start, uint32_t pending,
                              uint32_t reserve, TraceMember *m) {
  BuildContext &ctx = g_build;

  for (uint32_t attempt = 0; attempt < 2; attempt++) {
    const x86::Insn &last = ctx.insns[ctx.n - 1].insn;
    // Only instrumentation reads ctx.live (what a request must save): a
    // block without requests skips the look-ahead into its successors, most
    // of a build's cost when nothing is instrumented.  Returns ask
    // live_in_at for their target themselves.
    LiveSet out_live = g_engine.opt.use_liveness && ctx.nreqs > 0
                           ? live_out_of_terminator(g_engine.decoder, last, !ctx.has_terminator(), ctx.next_pc)
                           : LiveSet::all();
    ctx.live[ctx.n] = out_live;
    for (uint32_t i = ctx.n; i-- > 0;) ctx.live[i] = live_before(ctx.insns[i].insn, ctx.live[i + 1]);

    TableSlot *slot = epoch.table.slot(pc);
    Block *b = epoch.arena.alloc_array<Block>(1);
    if (!slot || !b || epoch.nblocks + pending >= epoch.max_blocks ||
        epoch.arena.used() + 4096 > epoch.arena.size() ||
        start + reserve + kBlockSlack > epoch.code_size)
      return BuildResult::kCacheFull;
    CodeWriter w(epoch.write_at(start), epoch.exec_at(start), epoch.code_size - start - reserve);
    Emitter em(epoch, ctx, w, b);
    Instrumenter placer(&epoch, &w);
    place_movable_requests(ctx, placer);
    b->orig_pc = pc;
    b->exec = epoch.exec_at(start);
    b->code_offset = start;
    b->routine_start = routine_start;
    bool ok = em.emit_body() && em.emit_terminator() && em.emit_fixups();
    if (!ok) {
      // Declined this once: built again the next time it is needed, rather
      // than ended before the site for the life of the epoch.
      if (em.extable_failed_at != ~0u && em.extable_retry_later) return BuildResult::kDeclined;
      if (em.extable_failed_at != ~0u && attempt == 0) {
        // The host cannot mirror this user access: end the block before it
        // so that it runs natively at its original address.
        if (em.extable_failed_at == 0) return BuildResult::kDeclined;
        ctx.n = em.extable_failed_at;
        ctx.next_pc = ctx.insns[ctx.n].insn.pc;
        ctx.early = EarlyEnd::kNative;
        for (uint32_t r = 0; r < ctx.nreqs; r++)
          if (ctx.reqs[r].insn_index >= ctx.n) ctx.reqs[r].insn_index = ~0u;
        continue;
      }
      return (w.overflowed() || em.out_of_arena) ? BuildResult::kCacheFull : BuildResult::kDeclined;
    }
    uint32_t stubs = stub_bytes(epoch, em.plan);
    if (start + w.size() + reserve + stubs + kBlockSlack > epoch.code_size) return BuildResult::kCacheFull;
    b->code_size = w.size();
    b->ended_early = !ctx.has_terminator();
    bool user_access = false;
    for (uint32_t i = 0; i < ctx.n; i++) user_access |= ctx.insns[i].is_extable_site != 0;
    *m = {b, slot, em.plan, start + w.size(), stubs, 0, 0, !user_access};
    g_engine.stats.blocks_built++;
    g_engine.stats.insns_translated += ctx.n;
    if (b->ended_early && ctx.ends_native()) g_engine.stats.fallbacks++;
    return BuildResult::kBuilt;
  }
  return BuildResult::kDeclined;
}

}  // namespace

BuildResult emit_block(Epoch &epoch, uint64_t pc, bool routine_start, uint32_t start, uint32_t pending,
                       uint32_t reserve, bool follower, uint64_t predicted_return, uint32_t depth,
                       RunLink link, TraceMember *m) {
  BuildContext &ctx = g_build;
  if (!decode_block(pc)) return ctx.early == EarlyEnd::kHooked ? BuildResult::kHooked : BuildResult::kDeclined;
  if (follower)
    for (uint32_t i = 0; i < ctx.n; i++)
      if (ctx.insns[i].is_extable_site) return BuildResult::kDeclined;
  ctx.routine_start = routine_start;
  ctx.predicted_return = predicted_return;
  ctx.run_link = link;
  ctx.may_lead_run = may_lead_run(ctx, depth);
  ctx.cache_half = epoch.index;
  run_plugins(ctx);
  BuildResult r = emit_instrumented(epoch, pc, routine_start, start, pending, reserve, m);
  if (r != BuildResult::kBuilt) drop_for_plugins(ctx);
  return r;
}

bool decode_block(uint64_t pc) {
  BuildContext &ctx = g_build;
  ctx.pc = pc;
  ctx.n = 0;
  ctx.nreqs = 0;
  ctx.rejected_requests = 0;
  ctx.early = EarlyEnd::kContinue;
  ctx.block.ctx = &ctx;
  uint32_t limit = g_engine.opt.max_block_insns;
  if (limit == 0 || limit > kMaxBlockInsns) limit = kMaxBlockInsns;
  uint64_t at = pc;
  bool gs_swapped = false;
  CodeReader code;
  while (true) {
    ctx.gs_swapped[ctx.n] = gs_swapped;
    if (ctx.n >= limit) {
      ctx.early = EarlyEnd::kContinue;
      break;
    }
    if (!kjit_os_may_translate(at)) {
      ctx.early = EarlyEnd::kNative;
      break;
    }
    const uint8_t *bytes = nullptr;
    const uint32_t got = code.at(at, &bytes);
    kjit_insn &ki = ctx.insns[ctx.n];
    ki.live_fentry = 0;
    const bool entry_site = got > 0 && at_function_entry(ctx) && kjit_os_fentry_site(at);
    if (!entry_site && (got == 0 || decode_cached(g_engine.decoder, at, bytes, got, &ki.insn) != x86::DecodeStatus::kOk)) {
      ctx.early = EarlyEnd::kNative;
      break;
    }
    if (entry_site || (may_be_fentry_site(ki.insn) && kjit_os_fentry_site(at))) {
      // Whatever the site holds now (a NOP, a call, the int3 of a patch
      // in flight), the copy holds a NOP and a test of the live byte.
      if (!reachable_from_cache(at) ||
          g_engine.decoder.decode(at, arch::kFentryNop, arch::kFentryNopSize, &ki.insn) != x86::DecodeStatus::kOk) {
        ctx.early = EarlyEnd::kNative;
        break;
      }
      ki.live_fentry = 1;
    }
    kjit_os_site_kind site = kjit_os_classify_site(at, ki.insn.cf == KJIT_CF_TRAP);
    if (must_run_natively(ki.insn, site)) {
      ctx.early = EarlyEnd::kNative;
      break;
    }
    if (enters_foreign_code(ki.insn)) {
      // Decided by what lies at the target: a module that becomes live
      // there retires the trace (kjit_engine_retire_range).
      note_source_read(ki.insn.target, 1);
      ctx.early = EarlyEnd::kHooked;
      break;
    }
    ki.index = ctx.n;
    ki.is_extable_site = site == KJIT_SITE_EXTABLE;
    ki.ctx = &ctx;
    ctx.n++;
    at += ki.insn.length;
    if (ki.insn.swaps_gs) gs_swapped = !gs_swapped;
    ctx.gs_swapped[ctx.n] = gs_swapped;
    if (ki.insn.cf != KJIT_CF_NONE) {
      ctx.early = EarlyEnd::kNone;
      break;
    }
  }
  ctx.next_pc = at;
  return ctx.n > 0;
}

}  // namespace kjit
