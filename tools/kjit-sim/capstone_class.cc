// SPDX-License-Identifier: GPL-2.0
#include "capstone_class.h"

#include "kjit/plugin.h"

namespace kjit::sim {
namespace {

bool cs_op0_is_imm(const cs_insn *in) {
  return in->detail->x86.op_count > 0 && in->detail->x86.operands[0].type == X86_OP_IMM;
}

}  // namespace

bool cs_has_group(const cs_insn *in, uint8_t g) {
  for (uint8_t i = 0; i < in->detail->groups_count; i++)
    if (in->detail->groups[i] == g) return true;
  return false;
}

int capstone_cf_class(const cs_insn *in) {
  switch (in->id) {
    case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB: case X86_INS_JE:
    case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE: case X86_INS_JL: case X86_INS_JNE:
    case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP:
    case X86_INS_JS: case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JRCXZ:
    case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
      return KJIT_CF_JCC;
    case X86_INS_JMP:
      return cs_op0_is_imm(in) ? KJIT_CF_JMP : KJIT_CF_JMP_INDIRECT;
    case X86_INS_CALL:
      return cs_op0_is_imm(in) ? KJIT_CF_CALL : KJIT_CF_CALL_INDIRECT;
    case X86_INS_RET:
      return KJIT_CF_RET;
    case X86_INS_UD0: case X86_INS_UD2: case X86_INS_UD2B: case X86_INS_INT3: case X86_INS_INT:
    case X86_INS_INTO: case X86_INS_INT1: case X86_INS_HLT:
      return KJIT_CF_TRAP;
    case X86_INS_SYSCALL: case X86_INS_SYSRET: case X86_INS_SYSENTER: case X86_INS_SYSEXIT:
    case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ: case X86_INS_RSM:
    case X86_INS_VMCALL: case X86_INS_VMLAUNCH: case X86_INS_VMRESUME: case X86_INS_VMMCALL:
    case X86_INS_XBEGIN: case X86_INS_XABORT: case X86_INS_XEND: case X86_INS_ENCLU:
    case X86_INS_ENCLS: case X86_INS_LJMP: case X86_INS_LCALL: case X86_INS_RETF:
    case X86_INS_RETFQ: case X86_INS_VMRUN:
      return KJIT_CF_SYSTEM;
    default:
      break;
  }
  // Anything else Capstone calls a control transfer must be looked at.
  if (cs_has_group(in, CS_GRP_JUMP) || cs_has_group(in, CS_GRP_CALL) || cs_has_group(in, CS_GRP_RET) ||
      cs_has_group(in, CS_GRP_IRET))
    return -1;
  return KJIT_CF_NONE;
}

}  // namespace kjit::sim
