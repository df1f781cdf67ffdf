// SPDX-License-Identifier: GPL-2.0
#include "core/liveness.h"

#include "arch/arch.h"
#include "core/code_reader.h"
#include "core/decode_cache.h"
#include "core/engine_state.h"
#include "core/source_deps.h"

namespace kjit {
namespace {
constexpr uint16_t kRspBit = 1u << KJIT_REG_RSP;
constexpr uint32_t kLookahead = 16;
// Direct calls followed, one inside the other, for the flags (see below).
constexpr uint32_t kCallDepth = 2;
}  // namespace
static LiveSet compute_live_in(const x86::Decoder &decoder, uint64_t pc, uint32_t depth);

// What a return leaves live.  Everything after assembly's: it may return
// results in flags or in any register.  After a compiled C function's
// (kjit_os_c_abi_return), by the SysV ABI, its caller reads neither the
// arithmetic flags nor a scratch register other than the two that return
// values (rax, rdx).  The return sites already rely on it for rcx and the
// flags (indirect_chain.h); a hook that replaced the return address (a
// return trampoline) returns to the same caller, who reads no more.
static LiveSet live_after_return(const x86::Insn &ret) {
  if (!g_engine.opt.abi_returns || !kjit_os_c_abi_return(ret.pc)) return LiveSet::all();
  return {static_cast<uint16_t>(x86::kAllGprs & ~x86::kDeadAfterCReturn),
          static_cast<uint8_t>(x86::kAllFlags & ~x86::kAllArithFlags)};
}

// What a direct call leaves live before it, given what its callee's entry
// and its return site read.  Into a compiled C function (the callee's start
// is one, kjit_os_c_abi_return): never the registers such a function
// neither reads nor preserves (x86::kDeadBeforeCCall), whatever the look-ahead
// could not rule out.
static LiveSet live_before_callee(const x86::Insn &call, LiveSet callee_and_return_site) {
  if (call.cf == KJIT_CF_CALL && g_engine.opt.abi_returns && kjit_os_c_abi_return(call.target))
    callee_and_return_site.regs = static_cast<uint16_t>(callee_and_return_site.regs & ~x86::kDeadBeforeCCall);
  return callee_and_return_site;
}

// What an indirect call leaves live before it: its callee is unknown, so
// every register (its arguments, the thunk's target register).  But out of
// a compiled C function (kjit_os_c_abi_return) not the arithmetic flags:
// GCC passes nothing in them and clobbers them at every call and every
// x86 inline asm, so no function it calls through a pointer can depend on
// what they hold (kernel/x86's paravirt and retpoline call sites are such
// asm).  DF stays live: the ABI has it clear on entry.
static LiveSet live_before_indirect_callee(const x86::Insn &call) {
  LiveSet live = LiveSet::all();
  if (call.cf == KJIT_CF_CALL_INDIRECT && g_engine.opt.abi_returns && kjit_os_c_abi_return(call.pc))
    live.flags = static_cast<uint8_t>(x86::kAllFlags & ~x86::kAllArithFlags);
  return live;
}

LiveSet live_before(const x86::Insn &insn, LiveSet after) {
  LiveSet in;
  in.regs = static_cast<uint16_t>((after.regs & ~insn.regs_written) | insn.regs_read | kRspBit);
  in.flags = static_cast<uint8_t>((after.flags & ~insn.flags_written) | insn.flags_read);
  return in;
}

// Live-in of recently analysed addresses: successors are shared by many
// blocks.  Used under the engine lock; cleared whenever an epoch is reset,
// because the code may have been patched since (flushes follow patching).
// Each keeps the code it was computed from: a build that uses it depends
// on that code as if it had read it (source_deps.h).
struct LiveMemo {
  uint64_t pc;
  LiveSet live;
  LivenessSources sources;
};
constexpr uint32_t kMemoSize = 4096;
constinit LiveMemo g_memo[kMemoSize]{};

LiveSet live_in_at(const x86::Decoder &decoder, uint64_t pc) {
  LiveMemo &m = g_memo[(pc ^ (pc >> 12)) & (kMemoSize - 1)];
  if (m.pc == pc && pc != 0) {
    if (g_trace_sources) g_trace_sources->add_all(m.sources);
    return m.live;
  }
  LivenessSources *outer = g_liveness_sources;
  LivenessSources read;
  read.clear();
  g_liveness_sources = &read;
  LiveSet live = compute_live_in(decoder, pc, 0);
  g_liveness_sources = outer;
  if (outer) outer->add_all(read);
  m = {pc, live, read};
  return live;
}

void forget_liveness() {
  for (LiveMemo &m : g_memo) m.pc = 0;
}

// Reads code the engine may not translate too (noinstr, entry text): which
// flags an instruction reads does not depend on where it may run.
static LiveSet compute_live_in(const x86::Decoder &decoder, uint64_t pc, uint32_t depth) {
  // under the engine lock; keeps kernel stacks small
  static x86::Insn seqs[kCallDepth + 1][kLookahead];
  x86::Insn *seq = seqs[depth];
  uint32_t n = 0;
  uint64_t at = pc;
  bool reached_transfer = false;
  CodeReader code;
  while (n < kLookahead) {
    const uint8_t *bytes = nullptr;
    const uint32_t got = code.at(at, &bytes);
    if (got == 0 || decode_cached(decoder, at, bytes, got, &seq[n]) != x86::DecodeStatus::kOk) break;
    at += seq[n].length;
    if (seq[n].cf == KJIT_CF_JMP) {
      // A direct jump reads nothing: what is live before it is what is
      // live at its target (a call's return address is often a jump back
      // into the function's main path).
      at = seq[n++].target;
      continue;
    }
    if (seq[n++].cf != KJIT_CF_NONE) {
      reached_transfer = true;
      break;
    }
  }
  // Past the horizon nothing is known, and the successors of a transfer are
  // not followed again (one level is what the block builder asks for), but
  // for a return: what its caller may read (live_after_return).  A direct
  // call is the exception too: it leaves the flags to the callee, so what
  // the callee's first instructions read of them is what is live before the
  // call (a return site followed by `mov ; call f`, f testing something
  // first, has dead flags); and a compiled C callee reads neither r10 nor
  // r11 (live_before_callee).  An indirect call out of C code leaves the
  // arithmetic flags dead (live_before_indirect_callee).
  LiveSet live = LiveSet::all();
  if (reached_transfer && seq[n - 1].cf == KJIT_CF_RET) live = live_after_return(seq[n - 1]);
  if (reached_transfer && seq[n - 1].cf == KJIT_CF_CALL_INDIRECT) live = live_before_indirect_callee(seq[n - 1]);
  if (reached_transfer && seq[n - 1].cf == KJIT_CF_CALL) {
    if (depth < kCallDepth) live.flags = compute_live_in(decoder, seq[n - 1].target, depth + 1).flags;
    live = live_before_callee(seq[n - 1], live);
  }
  for (uint32_t i = n; i-- > 0;) live = live_before(seq[i], live);
  return live;
}

LiveSet live_out_of_terminator(const x86::Decoder &decoder, const x86::Insn &last,
                               bool block_ended_early, uint64_t next_pc) {
  if (block_ended_early) return live_in_at(decoder, next_pc);
  switch (last.cf) {
    case KJIT_CF_NONE:
      return live_in_at(decoder, next_pc);
    case KJIT_CF_JCC:
      return live_in_at(decoder, last.target) | live_in_at(decoder, next_pc);
    case KJIT_CF_JMP:
      return live_in_at(decoder, last.target);
    case KJIT_CF_CALL:
      // The callee may preserve anything live at the return site.
      return live_before_callee(last, live_in_at(decoder, last.target) | live_in_at(decoder, next_pc));
    case KJIT_CF_RET:
      return live_after_return(last);
    case KJIT_CF_CALL_INDIRECT:
      return live_before_indirect_callee(last);
    default:
      return LiveSet::all();
  }
}

}  // namespace kjit
