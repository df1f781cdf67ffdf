/* SPDX-License-Identifier: GPL-2.0 */
// Emits an inserted call at one point of a block: inlined and specialised
// when the routine allows it, otherwise an outlined call with the live
// caller-saved registers and flags preserved.  The core asks for a call
// and its cost; the saves, the argument registers and the call follow the
// instruction set's calling convention, so each ISA implements this class
// (arch/x86/instrumentation.cc), as DynamoRIO keeps its clean calls in
// core/arch/x86/mangle.c.
#pragma once
#include "arch/emit.h"
#include "core/build_context.h"
#include "core/epoch.h"

namespace kjit {

// The state an inserted call would clobber at a point, for placement.
struct SaveCost {
  uint32_t flag_saves;  // pushfq/popfq pairs needed (0 or 1)
  uint32_t reg_saves;   // push/pop pairs needed
  uint32_t weight() const { return flag_saves * 6 + reg_saves; }
};

class Instrumenter {
 public:
  Instrumenter(Epoch *epoch, CodeWriter *w) : epoch_(epoch), w_(w) {}
  SaveCost cost(const CallRequest &req, const x86::Insn &insn, LiveSet live);
  void emit(const CallRequest &req, const x86::Insn &insn, LiveSet live);

 private:
  void resolve_args(const CallRequest &req, const x86::Insn &insn, InlineArgs *args,
                    uint8_t *src_reg);
  const InlinedCode *specialise(const CallRequest &req, const x86::Insn &insn);
  void load_reg_args(const InlineArgs &args, const uint8_t *src_reg, uint32_t pushed_bytes);
  void push_effective_address(uint32_t below);
  void add_percpu_base(uint8_t reg);
  struct SavedState {
    uint16_t regs;
    bool flags;
  };
  uint32_t save(SavedState st);
  void restore(SavedState st);
  void emit_call(const CallRequest &req, const x86::Insn &insn, LiveSet live);
  // Where translated code calls the request's routine, 0: nowhere.
  uint64_t routine_target(const CallRequest &req) const;
  void call_routine(uint64_t target);
  // kjit_insert_context_call's (arch/x86/context_call.cc).
  void emit_context_call(const CallRequest &req, const x86::Insn &insn);
  void emit_guard_compare(const kjit_arg &guard);
  void emit_outlined(const CallRequest &req, const InlineArgs &args, const uint8_t *src_reg,
                     LiveSet live);
  Epoch *epoch_;
  CodeWriter *w_;
  const x86::Insn *insn_ = nullptr;  // the instruction being instrumented
};

}  // namespace kjit
