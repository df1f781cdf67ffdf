// SPDX-License-Identifier: GPL-2.0
#include "disassembly.h"

#include <Zydis/Zydis.h>

namespace kjit::x86::disasm {
namespace {

bool is_conditional(ZydisMnemonic m) {
  switch (m) {
    case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JBE: case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ:
    case ZYDIS_MNEMONIC_JL: case ZYDIS_MNEMONIC_JLE: case ZYDIS_MNEMONIC_JNB: case ZYDIS_MNEMONIC_JNBE:
    case ZYDIS_MNEMONIC_JNL: case ZYDIS_MNEMONIC_JNLE: case ZYDIS_MNEMONIC_JNO: case ZYDIS_MNEMONIC_JNP:
    case ZYDIS_MNEMONIC_JNS: case ZYDIS_MNEMONIC_JNZ: case ZYDIS_MNEMONIC_JO: case ZYDIS_MNEMONIC_JP:
    case ZYDIS_MNEMONIC_JRCXZ: case ZYDIS_MNEMONIC_JS: case ZYDIS_MNEMONIC_JZ: case ZYDIS_MNEMONIC_LOOP:
    case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
      return true;
    default:
      return false;
  }
}

ZydisDecoder long_mode_decoder() {
  ZydisDecoder dec;
  ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  return dec;
}

}  // namespace

bool att_text(uint64_t addr, const uint8_t *bytes, size_t size, std::string *text, uint32_t *length) {
  ZydisDisassembledInstruction insn;
  if (!ZYAN_SUCCESS(ZydisDisassembleATT(ZYDIS_MACHINE_MODE_LONG_64, addr, bytes, size, &insn))) return false;
  *text = insn.text;
  *length = insn.info.length;
  return true;
}

uint32_t decode_branch(uint64_t addr, const uint8_t *bytes, size_t size, ConditionalBranch *out) {
  const ZydisDecoder dec = long_mode_decoder();
  ZydisDecodedInstruction in;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, bytes, size, &in, ops))) return 0;
  ZyanU64 target = 0;
  out->is_conditional =
      is_conditional(in.mnemonic) && ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], addr, &target));
  out->target = target;
  return in.length;
}

uint32_t decode_transfer(const uint8_t *bytes, size_t size, bool *transfers_control) {
  const ZydisDecoder dec = long_mode_decoder();
  ZydisDecodedInstruction in;
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, nullptr, bytes, size, &in))) return 0;
  switch (in.meta.category) {
    case ZYDIS_CATEGORY_COND_BR: case ZYDIS_CATEGORY_UNCOND_BR: case ZYDIS_CATEGORY_CALL:
    case ZYDIS_CATEGORY_RET: case ZYDIS_CATEGORY_SYSTEM: case ZYDIS_CATEGORY_INTERRUPT:
      *transfers_control = true;
      break;
    default:
      *transfers_control = false;
      break;
  }
  return in.length;
}

}  // namespace kjit::x86::disasm
