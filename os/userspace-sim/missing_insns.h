/* SPDX-License-Identifier: GPL-2.0 */
// Arithmetic of instructions the captured kernel runs that Unicorn 2.0.1
// rejects on every CPU model, for Emulator::emulate_missing.
#ifndef KJIT_SIM_MISSING_INSNS_H
#define KJIT_SIM_MISSING_INSNS_H

#include <cstdint>

namespace kjit::sim {

// Carry-less product of two 64-bit values, as PCLMULQDQ computes it (the
// 128-bit result as lo, hi).
void clmul64(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi);

}  // namespace kjit::sim
#endif
