// SPDX-License-Identifier: GPL-2.0
// arch/arch.h: encode_operand_address.  The instrumentation passes a
// memory operand's effective address to an analysis routine (KJIT_ARG_KIND_MEM_EA)
// by re-encoding the operand as a lea, with rsp-based addresses moved by
// what the instrumentation has pushed since.
#include <Zydis/Zydis.h>

#include "arch/arch.h"

namespace kjit {

uint32_t arch::encode_operand_address(const x86::Insn &in, uint8_t dst_reg, int64_t rsp_moved_by,
                                      uint8_t out[15]) {
  ZydisDecoder zd;
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  ZydisDecoderInit(&zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  const ZydisDecodedOperand *mem = nullptr;
  if (ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zd, in.bytes, in.length, &zi, ops)))
    for (uint32_t k = 0; k < zi.operand_count_visible; k++)
      if (ops[k].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[k].mem.type == ZYDIS_MEMOP_TYPE_MEM) mem = &ops[k];
  if (!mem) return 0;
  ZydisEncoderRequest req;
  __builtin_memset(&req, 0, sizeof(req));
  req.machine_mode = ZYDIS_MACHINE_MODE_LONG_64;
  req.mnemonic = ZYDIS_MNEMONIC_LEA;
  req.operand_count = 2;
  req.operands[0].type = ZYDIS_OPERAND_TYPE_REGISTER;
  req.operands[0].reg.value = static_cast<ZydisRegister>(ZYDIS_REGISTER_RAX + dst_reg);
  req.operands[1].type = ZYDIS_OPERAND_TYPE_MEMORY;
  req.operands[1].mem.size = 8;
  req.operands[1].mem.base = mem->mem.base;
  req.operands[1].mem.index = mem->mem.index;
  req.operands[1].mem.scale = mem->mem.index != ZYDIS_REGISTER_NONE ? mem->mem.scale : 0;
  int64_t disp = mem->mem.disp.has_displacement ? mem->mem.disp.value : 0;
  if (mem->mem.base == ZYDIS_REGISTER_RSP) disp += rsp_moved_by;
  req.operands[1].mem.displacement = disp;
  ZyanUSize len = 15;
  if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(&req, out, &len))) return 0;
  return static_cast<uint32_t>(len);
}

}  // namespace kjit
