/* SPDX-License-Identifier: GPL-2.0 */
// Which captured functions are compiled C, for kjit_os_c_abi_return: the
// module asks ftrace for a record at the function's start; a capture has no
// ftrace table, so the simulator looks at the start itself.
#ifndef KJIT_SIM_C_FUNCTIONS_H
#define KJIT_SIM_C_FUNCTIONS_H

#include <cstdint>

#include "capture_file.h"
#include "sim_symbols.h"

namespace kjit::sim {

// True when the function holding `addr` (the closest symbol at or below
// it) starts with its fentry site: `call __fentry__` as vmlinux has it
// (`fentry`: that function's address), or the 5-byte NOP the kernel makes
// of it while no tracer uses it; or it is the capture's entry function,
// entered after that site.  False when the start was not captured.
bool in_c_function(const Capture &cap, const SymbolTable &syms, uint64_t fentry, uint64_t addr);

}  // namespace kjit::sim
#endif
