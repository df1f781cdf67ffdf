/* SPDX-License-Identifier: GPL-2.0 */
// What a translation may leave changed where a compiled C function returns
// to its caller (kjit_os_c_abi_return): by the SysV ABI the caller reads
// neither the arithmetic flags nor a scratch register other than rax and
// rdx (KJIT_C_RETURN_DEAD_REGS), so the engine's ABI return sites and the
// instrumentation before such a return may change them.
#pragma once
#include "kjit/engine.h"

namespace kjit::sim {

inline bool dead_after_c_return(int reg) {
  return reg >= 0 && reg < 16 && (KJIT_C_RETURN_DEAD_REGS >> reg & 1);
}

}  // namespace kjit::sim
