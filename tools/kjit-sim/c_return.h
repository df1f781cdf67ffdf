/* SPDX-License-Identifier: GPL-2.0 */
// What a translation may leave changed where a compiled C function returns
// to its caller (kjit_os_c_abi_return): by the SysV ABI the caller reads
// neither the arithmetic flags nor a scratch register other than rax and
// rdx, so the engine's ABI return sites and the instrumentation before
// such a return may change them.
#pragma once
#include "arch/x86/calling_convention.h"

namespace kjit::sim {

inline bool dead_after_c_return(int reg) {
  return reg >= 0 && reg < 16 && (x86::kDeadAfterCReturn >> reg & 1);
}

}  // namespace kjit::sim
