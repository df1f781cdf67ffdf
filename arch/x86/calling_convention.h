/* SPDX-License-Identifier: GPL-2.0 */
// The System V x86-64 calling convention, as far as the engine calls
// analysis routines: where arguments go and what a call may clobber.
#pragma once
#include "kjit/engine.h"

namespace kjit::x86 {

constexpr uint32_t kSysvArgRegs[6] = {KJIT_REG_RDI, KJIT_REG_RSI, KJIT_REG_RDX,
                                      KJIT_REG_RCX, KJIT_REG_R8,  KJIT_REG_R9};

constexpr uint16_t kCallerSaved = (1u << KJIT_REG_RAX) | (1u << KJIT_REG_RCX) | (1u << KJIT_REG_RDX) |
                                  (1u << KJIT_REG_RSI) | (1u << KJIT_REG_RDI) | (1u << KJIT_REG_R8) |
                                  (1u << KJIT_REG_R9) | (1u << KJIT_REG_R10) | (1u << KJIT_REG_R11);

// What a compiled C function's caller cannot read after it returns: the
// scratch registers but the two that return values (rax, rdx).
constexpr uint16_t kDeadAfterCReturn = KJIT_C_RETURN_DEAD_REGS;
static_assert(kDeadAfterCReturn == (kCallerSaved & ~((1u << KJIT_REG_RAX) | (1u << KJIT_REG_RDX))),
              "KJIT_C_RETURN_DEAD_REGS is the caller-saved set but rax and rdx");

// What a compiled C function neither reads nor keeps: r10 and r11 pass no
// argument (r10 is GCC's static chain, for nested functions, which kernel
// code has none of) and are scratch.  Before a direct call into such a
// function they are dead: the callee cannot read them and its caller
// cannot read them after it returns (kDeadAfterCReturn).  rax is left out:
// a variadic callee reads al.
constexpr uint16_t kDeadBeforeCCall = (1u << KJIT_REG_R10) | (1u << KJIT_REG_R11);
static_assert((kDeadBeforeCCall & kDeadAfterCReturn) == kDeadBeforeCCall,
              "a C callee clobbers what it does not read");

}  // namespace kjit::x86
