/* SPDX-License-Identifier: GPL-2.0 */
// Zydis's general-purpose registers by their encoding numbers (rax 0 ..
// r15 15), for the files of arch/x86 that read or write Zydis operands.
// Zydis numbers each width's GPRs in encoding order, the byte registers
// with ah..bh after bl: ranges of the enumeration answer without a call
// into the library (every operand of every decode asks).
#pragma once
#include <Zydis/Zydis.h>

namespace kjit::x86 {

static_assert(ZYDIS_REGISTER_R15 - ZYDIS_REGISTER_RAX == 15 && ZYDIS_REGISTER_R15D - ZYDIS_REGISTER_EAX == 15 &&
                  ZYDIS_REGISTER_R15W - ZYDIS_REGISTER_AX == 15 && ZYDIS_REGISTER_R15B - ZYDIS_REGISTER_AL == 19 &&
                  ZYDIS_REGISTER_AH - ZYDIS_REGISTER_AL == 4 && ZYDIS_REGISTER_SPL - ZYDIS_REGISTER_AL == 8,
              "Zydis's register enumeration changed its order");

// A Zydis register's GPR number (0..15), or -1 for anything else.
inline int gpr_number(ZydisRegister reg) {
  if (reg >= ZYDIS_REGISTER_RAX && reg <= ZYDIS_REGISTER_R15) return reg - ZYDIS_REGISTER_RAX;
  if (reg >= ZYDIS_REGISTER_EAX && reg <= ZYDIS_REGISTER_R15D) return reg - ZYDIS_REGISTER_EAX;
  if (reg >= ZYDIS_REGISTER_AX && reg <= ZYDIS_REGISTER_R15W) return reg - ZYDIS_REGISTER_AX;
  if (reg < ZYDIS_REGISTER_AL || reg > ZYDIS_REGISTER_R15B) return -1;
  // al cl dl bl, then ah ch dh bh (bits 8..15 of the first four), then
  // spl bpl sil dil r8b..r15b
  const int byte = reg - ZYDIS_REGISTER_AL;
  return byte < 4 ? byte : byte - 4;
}

inline bool is_high_byte(ZydisRegister reg) { return reg >= ZYDIS_REGISTER_AH && reg <= ZYDIS_REGISTER_BH; }

// `reg`, a GPR other than ah..bh, with its number replaced by `to`, at the
// same width.
inline ZydisRegister with_gpr_number(ZydisRegister reg, uint32_t to) {
  if (reg >= ZYDIS_REGISTER_RAX && reg <= ZYDIS_REGISTER_R15) return static_cast<ZydisRegister>(ZYDIS_REGISTER_RAX + to);
  if (reg >= ZYDIS_REGISTER_EAX && reg <= ZYDIS_REGISTER_R15D) return static_cast<ZydisRegister>(ZYDIS_REGISTER_EAX + to);
  if (reg >= ZYDIS_REGISTER_AX && reg <= ZYDIS_REGISTER_R15W) return static_cast<ZydisRegister>(ZYDIS_REGISTER_AX + to);
  return static_cast<ZydisRegister>(ZYDIS_REGISTER_AL + (to < 4 ? to : to + 4));
}

}  // namespace kjit::x86
