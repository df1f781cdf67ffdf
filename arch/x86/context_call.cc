// SPDX-License-Identifier: GPL-2.0
// A context call (kjit_insert_context_call): the registers are pushed in
// the order that makes the save area itself a struct kjit_mcontext, and its
// address is the routine's one argument.  Saving every register is what a
// routine that reads every register needs anyway; laying the saves out as
// the context costs two more pushes (rip, and rsp as the program has it),
// as DynamoRIO's clean calls hand over dr_mcontext_t.
#include "arch/instrumentation.h"

#include "core/engine_state.h"

namespace kjit {
namespace {

constexpr uint32_t kSlot = 8;
static_assert(__builtin_offsetof(kjit_mcontext, gpr) == 0 &&
                  __builtin_offsetof(kjit_mcontext, rflags) == 16 * kSlot &&
                  __builtin_offsetof(kjit_mcontext, rip) == 17 * kSlot &&
                  sizeof(kjit_mcontext) == 18 * kSlot,
              "emit_context_call pushes kjit_mcontext from its last field down");

// The original address the code goes on at with the state at `where`.
uint64_t context_rip(uint8_t where, const x86::Insn &insn) {
  switch (where) {
    case KJIT_IPOINT_TAKEN: return insn.target;
    case KJIT_IPOINT_AFTER:
    case KJIT_IPOINT_NOT_TAKEN: return insn.pc + insn.length;
    default: return insn.pc;
  }
}

}  // namespace

void Instrumenter::emit_context_call(const CallRequest &req, const x86::Insn &insn) {
  const uint64_t target = routine_target(req);
  if (!target) {
    g_engine.stats.fallbacks++;  // the host has no gate left for it
    return;
  }
  w_->push_imm(context_rip(req.where, insn));
  w_->pushfq();
  for (uint8_t r = 15; r > KJIT_REG_RSP; r--) w_->push_reg(r);
  // `push rsp` stores rsp as it was before it: the program's less the
  // slots pushed so far.  The add may clobber the flags: they are saved.
  constexpr uint8_t kAboveRspSlot = (17 - KJIT_REG_RSP) * kSlot;
  w_->push_reg(KJIT_REG_RSP);
  const uint8_t add_rsp_slot[] = {0x48, 0x83, 0x04, 0x24, kAboveRspSlot};  // add qword [rsp], imm8
  w_->bytes(add_rsp_slot, sizeof(add_rsp_slot));
  for (uint8_t r = KJIT_REG_RSP; r-- > 0;) w_->push_reg(r);
  w_->mov_reg_reg(KJIT_REG_RDI, KJIT_REG_RSP);
  call_routine(target);
  // Every register comes back, dead or not: the next context call at this
  // point or after it must see the program's values too.
  for (uint8_t r = 0; r < 16; r++) {
    if (r == KJIT_REG_RSP) w_->lea_rsp(kSlot);
    else w_->pop_reg(r);
  }
  w_->popfq();
  w_->lea_rsp(kSlot);  // rip
  g_engine.stats.outlined_calls++;
}

}  // namespace kjit
