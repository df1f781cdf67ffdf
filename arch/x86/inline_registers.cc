// SPDX-License-Identifier: GPL-2.0
// Which registers a specialised routine uses, and a copy of it that uses
// registers dead at its insertion point instead of live ones
// (arch/arch.h: note_inlined_registers, rename_inlined_registers).  A live
// register the routine writes costs a push and a pop around it; before a
// direct call into compiled C code r10 and r11 are dead (liveness), and a
// routine compiled to use rax and rdx can use them instead.
#include <Zydis/Zydis.h>

#include "arch/arch.h"
#include "arch/x86/zydis_registers.h"

namespace kjit {
namespace {

using x86::gpr_number;
using x86::is_high_byte;
using x86::with_gpr_number;

constexpr uint16_t kRspBit = 1u << KJIT_REG_RSP;

// Working storage, used under the engine lock: too large for a kernel stack.
struct Scratch {
  ZydisDecoder decoder;
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  ZydisEncoderRequest req;
  InlinedCode out;
};
constinit Scratch g_scratch{};

bool decode_at(const InlinedCode &code, uint32_t off) {
  Scratch &s = g_scratch;
  ZydisDecoderInit(&s.decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&s.decoder, code.code + off, code.size - off, &s.zi, s.ops));
}

// Whether the decoded instruction (g_scratch) still encodes with visible
// operand k's register replaced by another: `and rax, imm32` has a short
// form that implies rax, and a general one; a shift's cl has none.
bool encodes_with_other_register(uint32_t k) {
  Scratch &s = g_scratch;
  if (k >= s.zi.operand_count_visible ||
      !ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(&s.zi, s.ops, s.zi.operand_count_visible, &s.req)))
    return false;
  ZydisEncoderOperand &op = s.req.operands[k];
  const int r = gpr_number(op.reg.value);
  op.reg.value = with_gpr_number(op.reg.value, static_cast<uint32_t>(r ^ 8));
  uint8_t enc[15];
  ZyanUSize len = sizeof(enc);
  return ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(&s.req, enc, &len));
}

// The GPRs operand k names, into *used, and into *fixed those no rename
// may change: one the encoding alone implies (mul's rax, a shift's cl, a
// string instruction's rsi), ah..bh (no REX form), or the stack's.
void note_operand(uint32_t k, uint16_t *used, uint16_t *fixed) {
  const ZydisDecodedOperand &op = g_scratch.ops[k];
  if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
    const int r = gpr_number(op.reg.value);
    if (r < 0) return;
    *used |= static_cast<uint16_t>(1u << r);
    const bool implied = op.visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN ||
                         (op.visibility == ZYDIS_OPERAND_VISIBILITY_IMPLICIT && !encodes_with_other_register(k));
    if (implied || is_high_byte(op.reg.value)) *fixed |= static_cast<uint16_t>(1u << r);
    return;
  }
  if (op.type != ZYDIS_OPERAND_TYPE_MEMORY) return;
  const int regs[2] = {gpr_number(op.mem.base), gpr_number(op.mem.index)};
  for (int r : regs) {
    if (r < 0) continue;
    *used |= static_cast<uint16_t>(1u << r);
    if (op.visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT) *fixed |= static_cast<uint16_t>(1u << r);
  }
}

}  // namespace

void arch::note_inlined_registers(InlinedCode *code) {
  Scratch &s = g_scratch;
  uint16_t used = 0, fixed = kRspBit;
  bool straight = true;
  for (uint32_t off = 0; off < code->size; off += s.zi.length) {
    if (!decode_at(*code, off)) {
      straight = false;
      break;
    }
    // Internal branches would need their displacements laid out again
    // when a register's new encoding changes an instruction's length.
    if (s.zi.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE) straight = false;
    for (uint32_t k = 0; k < s.zi.operand_count; k++) note_operand(k, &used, &fixed);
  }
  code->used_regs = used;
  code->renamable_regs =
      straight ? static_cast<uint16_t>(code->clobbered_regs & ~code->needs_arg_regs & ~fixed) : 0;
}

uint16_t arch::rename_targets(const InlinedCode &code, uint16_t live_regs, uint8_t map[16]) {
  uint16_t moving = code.renamable_regs & live_regs;
  uint16_t free_regs = static_cast<uint16_t>(x86::kAllGprs & ~live_regs & ~code.used_regs & ~kRspBit);
  uint16_t moved = 0;
  for (uint32_t r = 0; r < 16; r++) map[r] = static_cast<uint8_t>(r);
  for (uint32_t r = 0; r < 16 && free_regs; r++) {
    if (!(moving >> r & 1)) continue;
    const uint32_t to = static_cast<uint32_t>(__builtin_ctz(free_regs));
    free_regs = static_cast<uint16_t>(free_regs & (free_regs - 1));
    map[r] = static_cast<uint8_t>(to);
    moved |= static_cast<uint16_t>(1u << r);
  }
  return moved;
}

const InlinedCode *arch::rename_inlined_registers(const InlinedCode &code, uint16_t live_regs) {
  Scratch &s = g_scratch;
  uint8_t map[16];
  const uint16_t moved = rename_targets(code, live_regs, map);
  if (!moved) return nullptr;
  InlinedCode &out = s.out;
  out = code;
  out.size = 0;
  out.clobbered_regs = 0;
  for (uint32_t r = 0; r < 16; r++)
    if (code.clobbered_regs >> r & 1) out.clobbered_regs |= static_cast<uint16_t>(1u << map[r]);
  out.used_regs = 0;
  for (uint32_t r = 0; r < 16; r++)
    if (code.used_regs >> r & 1) out.used_regs |= static_cast<uint16_t>(1u << map[r]);
  out.renamable_regs = 0;  // a copy made for one point: not renamed again
  for (uint32_t off = 0; off < code.size; off += s.zi.length) {
    if (!decode_at(code, off) ||
        !ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(&s.zi, s.ops, s.zi.operand_count_visible,
                                                                     &s.req)))
      return nullptr;
    for (uint32_t k = 0; k < s.req.operand_count; k++) {
      ZydisEncoderOperand &op = s.req.operands[k];
      if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
        const int r = gpr_number(op.reg.value);
        if (r >= 0 && (moved >> r & 1)) op.reg.value = with_gpr_number(op.reg.value, map[r]);
      } else if (op.type == ZYDIS_OPERAND_TYPE_MEMORY) {
        const int b = gpr_number(op.mem.base), x = gpr_number(op.mem.index);
        if (b >= 0 && (moved >> b & 1)) op.mem.base = with_gpr_number(op.mem.base, map[b]);
        if (x >= 0 && (moved >> x & 1)) op.mem.index = with_gpr_number(op.mem.index, map[x]);
      }
    }
    ZyanUSize len = kMaxInlineBytes - out.size;
    if (len > 15) len = 15;
    if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(&s.req, out.code + out.size, &len))) return nullptr;
    out.size += static_cast<uint32_t>(len);
  }
  return &out;
}

}  // namespace kjit
