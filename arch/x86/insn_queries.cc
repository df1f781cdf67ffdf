// SPDX-License-Identifier: GPL-2.0
// arch/arch.h: the mnemonic classification behind the plugin API's
// instruction queries (include/kjit/plugin.h).  Insn::mnemonic is a Zydis
// mnemonic id.
#include <Zydis/Mnemonic.h>

#include "arch/arch.h"

namespace kjit {
namespace {

// The first opcode byte: after the legacy prefixes and REX.
uint8_t opcode_byte(const x86::Insn &in) {
  uint32_t k = 0;
  while (k < in.length) {
    const uint8_t b = in.bytes[k];
    const bool legacy = b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
                        b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
    if (!legacy) break;
    k++;
  }
  if (k < in.length && (in.bytes[k] & 0xf0) == 0x40) k++;
  return k < in.length ? in.bytes[k] : 0;
}

StringOp string_kind(uint32_t mnemonic) {
  switch (mnemonic) {
    case ZYDIS_MNEMONIC_MOVSB: return {KJIT_STRING_MOVS, 1};
    case ZYDIS_MNEMONIC_MOVSW: return {KJIT_STRING_MOVS, 2};
    case ZYDIS_MNEMONIC_MOVSD: return {KJIT_STRING_MOVS, 4};
    case ZYDIS_MNEMONIC_MOVSQ: return {KJIT_STRING_MOVS, 8};
    case ZYDIS_MNEMONIC_LODSB: return {KJIT_STRING_LODS, 1};
    case ZYDIS_MNEMONIC_LODSW: return {KJIT_STRING_LODS, 2};
    case ZYDIS_MNEMONIC_LODSD: return {KJIT_STRING_LODS, 4};
    case ZYDIS_MNEMONIC_LODSQ: return {KJIT_STRING_LODS, 8};
    case ZYDIS_MNEMONIC_STOSB: return {KJIT_STRING_STOS, 1};
    case ZYDIS_MNEMONIC_STOSW: return {KJIT_STRING_STOS, 2};
    case ZYDIS_MNEMONIC_STOSD: return {KJIT_STRING_STOS, 4};
    case ZYDIS_MNEMONIC_STOSQ: return {KJIT_STRING_STOS, 8};
    case ZYDIS_MNEMONIC_CMPSB: return {KJIT_STRING_CMPS, 1};
    case ZYDIS_MNEMONIC_CMPSW: return {KJIT_STRING_CMPS, 2};
    case ZYDIS_MNEMONIC_CMPSD: return {KJIT_STRING_CMPS, 4};
    case ZYDIS_MNEMONIC_CMPSQ: return {KJIT_STRING_CMPS, 8};
    case ZYDIS_MNEMONIC_SCASB: return {KJIT_STRING_SCAS, 1};
    case ZYDIS_MNEMONIC_SCASW: return {KJIT_STRING_SCAS, 2};
    case ZYDIS_MNEMONIC_SCASD: return {KJIT_STRING_SCAS, 4};
    case ZYDIS_MNEMONIC_SCASQ: return {KJIT_STRING_SCAS, 8};
    default: return {KJIT_STRING_NONE, 0};
  }
}

}  // namespace

bool arch::is_cmpxchg(const x86::Insn &in) {
  return in.mnemonic == ZYDIS_MNEMONIC_CMPXCHG || in.mnemonic == ZYDIS_MNEMONIC_CMPXCHG8B ||
         in.mnemonic == ZYDIS_MNEMONIC_CMPXCHG16B;
}

int arch::atomic_old_value_reg(const x86::Insn &in) {
  if (!in.has_mem_operand || !in.mem_read || !in.mem_written) return -1;
  switch (in.mnemonic) {
    case ZYDIS_MNEMONIC_CMPXCHG:
      return KJIT_REG_RAX;
    case ZYDIS_MNEMONIC_XADD:
    case ZYDIS_MNEMONIC_XCHG:
      // The register operand is the only GPR these write.
      return in.regs_modified && !(in.regs_modified & (in.regs_modified - 1)) ? __builtin_ctz(in.regs_modified)
                                                                               : -1;
    default:
      return -1;
  }
}

bool arch::is_memory_hint(const x86::Insn &in) {
  switch (in.mnemonic) {
    case ZYDIS_MNEMONIC_NOP: case ZYDIS_MNEMONIC_PREFETCH: case ZYDIS_MNEMONIC_PREFETCHW:
    case ZYDIS_MNEMONIC_PREFETCHWT1: case ZYDIS_MNEMONIC_PREFETCHNTA: case ZYDIS_MNEMONIC_PREFETCHT0:
    case ZYDIS_MNEMONIC_PREFETCHT1: case ZYDIS_MNEMONIC_PREFETCHT2:
    // Cache and TLB maintenance name an address and read nothing.
    case ZYDIS_MNEMONIC_INVLPG: case ZYDIS_MNEMONIC_CLFLUSH: case ZYDIS_MNEMONIC_CLFLUSHOPT:
    case ZYDIS_MNEMONIC_CLWB: case ZYDIS_MNEMONIC_CLDEMOTE:
      return true;
    default:
      return false;
  }
}

StringOp arch::string_op(const x86::Insn &in) {
  // movsd and cmpsd are also SSE2 mnemonics (escaped by 0F); the string
  // forms have one-byte opcodes.
  if (in.length && opcode_byte(in) == 0x0f) return {KJIT_STRING_NONE, 0};
  return string_kind(in.mnemonic);
}

}  // namespace kjit
