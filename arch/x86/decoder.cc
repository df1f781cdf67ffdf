// SPDX-License-Identifier: GPL-2.0
#include "arch/x86/decoder.h"

#include <Zydis/Zydis.h>

#include "arch/x86/zydis_registers.h"

namespace kjit::x86 {
namespace {

// A write replaces the whole 64-bit register only at 32 or 64 bits (32-bit
// writes zero-extend); 8/16-bit writes merge and therefore also read.
bool is_full_write(ZydisRegister reg) {
  return (reg >= ZYDIS_REGISTER_RAX && reg <= ZYDIS_REGISTER_R15) ||
         (reg >= ZYDIS_REGISTER_EAX && reg <= ZYDIS_REGISTER_R15D);
}

// mov, movzx, movsx and movsxd from memory into a GPR leave what they read
// in the register's low bytes (extension keeps them): that register, else
// kNoReg.  ah, bh, ch and dh hold it in byte 1 and are left out.
uint8_t loaded_value_register(const ZydisDecodedInstruction &zi, const ZydisDecodedOperand *ops) {
  switch (zi.mnemonic) {
    case ZYDIS_MNEMONIC_MOV: case ZYDIS_MNEMONIC_MOVZX: case ZYDIS_MNEMONIC_MOVSX: case ZYDIS_MNEMONIC_MOVSXD:
      break;
    default:
      return kNoReg;
  }
  if (zi.operand_count < 2 || ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER || ops[1].type != ZYDIS_OPERAND_TYPE_MEMORY)
    return kNoReg;
  const ZydisRegister dest = ops[0].reg.value;
  if (dest == ZYDIS_REGISTER_AH || dest == ZYDIS_REGISTER_BH || dest == ZYDIS_REGISTER_CH || dest == ZYDIS_REGISTER_DH)
    return kNoReg;
  const int r = gpr_number(dest);
  return r < 0 ? kNoReg : static_cast<uint8_t>(r);
}

// cmp and test: what each operand is (a GPR other than ah..dh, an
// immediate, the memory operand), for comparison tracing.  Anything else
// leaves cmp_kind zero.
void compare_operands(const ZydisDecodedInstruction &zi, const ZydisDecodedOperand *ops, Insn &in) {
  if ((zi.mnemonic != ZYDIS_MNEMONIC_CMP && zi.mnemonic != ZYDIS_MNEMONIC_TEST) || zi.operand_count < 2) return;
  uint8_t kind[2] = {0, 0}, reg[2] = {0, 0};
  int64_t imm = 0;
  for (int k = 0; k < 2; k++) {
    const ZydisDecodedOperand &op = ops[k];
    if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
      const ZydisRegister r = op.reg.value;
      if (r == ZYDIS_REGISTER_AH || r == ZYDIS_REGISTER_BH || r == ZYDIS_REGISTER_CH || r == ZYDIS_REGISTER_DH ||
          gpr_number(r) < 0)
        return;
      kind[k] = KJIT_OPERAND_REG;
      reg[k] = static_cast<uint8_t>(gpr_number(r));
    } else if (op.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
      kind[k] = KJIT_OPERAND_IMM;
      imm = op.imm.is_signed ? op.imm.value.s : static_cast<int64_t>(op.imm.value.u);
    } else if (op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.type == ZYDIS_MEMOP_TYPE_MEM) {
      kind[k] = KJIT_OPERAND_MEM;
    } else {
      return;
    }
  }
  for (int k = 0; k < 2; k++) in.cmp_kind[k] = kind[k], in.cmp_reg[k] = reg[k];
  in.cmp_size = static_cast<uint8_t>(zi.operand_width / 8);
  in.cmp_is_test = zi.mnemonic == ZYDIS_MNEMONIC_TEST;
  in.cmp_imm = imm;
}

uint8_t to_flag_bits(ZydisAccessedFlagsMask mask) {
  uint8_t out = 0;
  if (mask & ZYDIS_CPUFLAG_CF) out |= kFlagCF;
  if (mask & ZYDIS_CPUFLAG_PF) out |= kFlagPF;
  if (mask & ZYDIS_CPUFLAG_AF) out |= kFlagAF;
  if (mask & ZYDIS_CPUFLAG_ZF) out |= kFlagZF;
  if (mask & ZYDIS_CPUFLAG_SF) out |= kFlagSF;
  if (mask & ZYDIS_CPUFLAG_OF) out |= kFlagOF;
  if (mask & ZYDIS_CPUFLAG_DF) out |= kFlagDF;
  return out;
}

bool is_shift_or_rotate(ZydisMnemonic m) {
  switch (m) {
    case ZYDIS_MNEMONIC_SHL: case ZYDIS_MNEMONIC_SHR: case ZYDIS_MNEMONIC_SAR:
    case ZYDIS_MNEMONIC_ROL: case ZYDIS_MNEMONIC_ROR:
    case ZYDIS_MNEMONIC_RCL: case ZYDIS_MNEMONIC_RCR: case ZYDIS_MNEMONIC_SHLD:
    case ZYDIS_MNEMONIC_SHRD:
      return true;
    default:
      return false;
  }
}

// A shift's count when it is an immediate that the CPU's masking leaves
// nonzero: then the shift writes the flags it is documented to write.  An
// 8- or 16-bit rcl/rcr rotates by the masked count modulo 9 or 17, which can
// be zero and leave CF as it was: those keep the general case.
bool shifts_by_nonzero_immediate(const ZydisDecodedInstruction &zi, const ZydisDecodedOperand *ops) {
  if (zi.operand_count_visible < 2) return false;
  const ZydisDecodedOperand &count = ops[zi.operand_count_visible - 1];
  if (count.type != ZYDIS_OPERAND_TYPE_IMMEDIATE) return false;
  if ((zi.mnemonic == ZYDIS_MNEMONIC_RCL || zi.mnemonic == ZYDIS_MNEMONIC_RCR) && zi.operand_width < 32)
    return false;
  return (count.imm.value.u & (zi.operand_width == 64 ? 0x3f : 0x1f)) != 0;
}

bool is_trap(ZydisMnemonic m) {
  switch (m) {
    case ZYDIS_MNEMONIC_UD0: case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2:
    case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INTO:
    case ZYDIS_MNEMONIC_INT1: case ZYDIS_MNEMONIC_HLT:
      return true;
    default:
      return false;
  }
}

// Instructions that leave the current privilege/flow context: never copied.
bool is_system_transfer(ZydisMnemonic m, const ZydisDecodedInstruction &zi) {
  switch (m) {
    case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSRET: case ZYDIS_MNEMONIC_SYSENTER:
    case ZYDIS_MNEMONIC_SYSEXIT: case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD:
    case ZYDIS_MNEMONIC_IRETQ: case ZYDIS_MNEMONIC_RSM: case ZYDIS_MNEMONIC_VMCALL:
    case ZYDIS_MNEMONIC_VMLAUNCH: case ZYDIS_MNEMONIC_VMRESUME: case ZYDIS_MNEMONIC_VMMCALL:
    case ZYDIS_MNEMONIC_XBEGIN: case ZYDIS_MNEMONIC_XABORT: case ZYDIS_MNEMONIC_XEND:
    case ZYDIS_MNEMONIC_ENCLU: case ZYDIS_MNEMONIC_ENCLS: case ZYDIS_MNEMONIC_ENCLV:
    // TDX guest/host and AMD SVM world switches, user-interrupt return: they
    // leave the context like vmcall does (found by fuzz_decoder_vs_capstone:
    // 66 0f 01 cf is SEAMCALL, which the decoder classified as plain code).
    case ZYDIS_MNEMONIC_SEAMCALL: case ZYDIS_MNEMONIC_SEAMRET: case ZYDIS_MNEMONIC_SEAMOPS:
    case ZYDIS_MNEMONIC_TDCALL: case ZYDIS_MNEMONIC_VMRUN: case ZYDIS_MNEMONIC_UIRET:
      return true;
    default:
      break;
  }
  // Far transfers change CS.
  if (zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR) return true;
  return false;
}

bool is_jcc_mnemonic(ZydisMnemonic m, uint8_t *cond, JccKind *kind) {
  *kind = JccKind::kPlain;
  switch (m) {
    case ZYDIS_MNEMONIC_JO: *cond = 0x0; return true;
    case ZYDIS_MNEMONIC_JNO: *cond = 0x1; return true;
    case ZYDIS_MNEMONIC_JB: *cond = 0x2; return true;
    case ZYDIS_MNEMONIC_JNB: *cond = 0x3; return true;
    case ZYDIS_MNEMONIC_JZ: *cond = 0x4; return true;
    case ZYDIS_MNEMONIC_JNZ: *cond = 0x5; return true;
    case ZYDIS_MNEMONIC_JBE: *cond = 0x6; return true;
    case ZYDIS_MNEMONIC_JNBE: *cond = 0x7; return true;
    case ZYDIS_MNEMONIC_JS: *cond = 0x8; return true;
    case ZYDIS_MNEMONIC_JNS: *cond = 0x9; return true;
    case ZYDIS_MNEMONIC_JP: *cond = 0xa; return true;
    case ZYDIS_MNEMONIC_JNP: *cond = 0xb; return true;
    case ZYDIS_MNEMONIC_JL: *cond = 0xc; return true;
    case ZYDIS_MNEMONIC_JNL: *cond = 0xd; return true;
    case ZYDIS_MNEMONIC_JLE: *cond = 0xe; return true;
    case ZYDIS_MNEMONIC_JNLE: *cond = 0xf; return true;
    case ZYDIS_MNEMONIC_JRCXZ: case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JCXZ:
      *cond = 0; *kind = JccKind::kJrcxz; return true;
    case ZYDIS_MNEMONIC_LOOP: *cond = 0; *kind = JccKind::kLoop; return true;
    case ZYDIS_MNEMONIC_LOOPE: *cond = 0; *kind = JccKind::kLoope; return true;
    case ZYDIS_MNEMONIC_LOOPNE: *cond = 0; *kind = JccKind::kLoopne; return true;
    default: return false;
  }
}

bool is_control_register_class(ZydisRegister reg) {
  ZydisRegisterClass cls = ZydisRegisterGetClass(reg);
  return cls == ZYDIS_REGCLASS_CONTROL || cls == ZYDIS_REGCLASS_DEBUG || cls == ZYDIS_REGCLASS_SEGMENT;
}

// What of the instruction's result a replay cannot recompute
// (kjit_nondet_kind, include/kjit/plugin.h has the list by kind).
uint8_t classify_nondet(const ZydisDecodedInstruction &zi, const ZydisDecodedOperand *ops) {
  const bool to_register = zi.operand_count_visible > 0 && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER;
  switch (zi.mnemonic) {
    case ZYDIS_MNEMONIC_RDTSC: case ZYDIS_MNEMONIC_RDTSCP: case ZYDIS_MNEMONIC_RDPMC:
    case ZYDIS_MNEMONIC_RDMSR: case ZYDIS_MNEMONIC_CPUID: case ZYDIS_MNEMONIC_XGETBV:
    case ZYDIS_MNEMONIC_RDPKRU: case ZYDIS_MNEMONIC_IN: case ZYDIS_MNEMONIC_RDRAND:
    case ZYDIS_MNEMONIC_RDSEED: case ZYDIS_MNEMONIC_RDPID: case ZYDIS_MNEMONIC_RDFSBASE:
    case ZYDIS_MNEMONIC_RDGSBASE: case ZYDIS_MNEMONIC_RDSSPD: case ZYDIS_MNEMONIC_RDSSPQ:
    case ZYDIS_MNEMONIC_LSL: case ZYDIS_MNEMONIC_LAR:
      return KJIT_NONDET_REGISTERS;
    case ZYDIS_MNEMONIC_STR: case ZYDIS_MNEMONIC_SLDT: case ZYDIS_MNEMONIC_SMSW:
      return to_register ? KJIT_NONDET_REGISTERS : KJIT_NONDET_MEMORY;
    case ZYDIS_MNEMONIC_VERR: case ZYDIS_MNEMONIC_VERW:
      return KJIT_NONDET_FLAGS;
    case ZYDIS_MNEMONIC_SGDT: case ZYDIS_MNEMONIC_SIDT: case ZYDIS_MNEMONIC_XSAVE:
    case ZYDIS_MNEMONIC_XSAVE64: case ZYDIS_MNEMONIC_XSAVEOPT: case ZYDIS_MNEMONIC_XSAVEOPT64:
    case ZYDIS_MNEMONIC_XSAVEC: case ZYDIS_MNEMONIC_XSAVEC64: case ZYDIS_MNEMONIC_XSAVES:
    case ZYDIS_MNEMONIC_XSAVES64: case ZYDIS_MNEMONIC_FXSAVE: case ZYDIS_MNEMONIC_FXSAVE64:
      return KJIT_NONDET_MEMORY;
    case ZYDIS_MNEMONIC_OUT: case ZYDIS_MNEMONIC_WRMSR: case ZYDIS_MNEMONIC_WRPKRU:
    case ZYDIS_MNEMONIC_XSETBV: case ZYDIS_MNEMONIC_XRSTOR: case ZYDIS_MNEMONIC_XRSTOR64:
    case ZYDIS_MNEMONIC_XRSTORS: case ZYDIS_MNEMONIC_XRSTORS64: case ZYDIS_MNEMONIC_FXRSTOR:
    case ZYDIS_MNEMONIC_FXRSTOR64: case ZYDIS_MNEMONIC_INVLPG: case ZYDIS_MNEMONIC_INVPCID:
    case ZYDIS_MNEMONIC_WBINVD: case ZYDIS_MNEMONIC_INVD:
    case ZYDIS_MNEMONIC_LGDT: case ZYDIS_MNEMONIC_LIDT: case ZYDIS_MNEMONIC_LLDT:
    case ZYDIS_MNEMONIC_LTR: case ZYDIS_MNEMONIC_LMSW: case ZYDIS_MNEMONIC_CLTS:
    // The user's FS/GS base: no kernel code reads through it, and Unicorn
    // has FSGSBASE off (an invalid instruction there).
    case ZYDIS_MNEMONIC_WRFSBASE: case ZYDIS_MNEMONIC_WRGSBASE:
      return KJIT_NONDET_EFFECT;
    case ZYDIS_MNEMONIC_MOV:
      if (zi.operand_count_visible < 2) return KJIT_NONDET_NONE;
      // From a control, debug or segment register: the machine's value.
      if (ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER && is_control_register_class(ops[1].reg.value))
        return to_register ? KJIT_NONDET_REGISTERS : KJIT_NONDET_MEMORY;
      // To one: a change of machine state the replay does not model.
      if (to_register && is_control_register_class(ops[0].reg.value)) return KJIT_NONDET_EFFECT;
      return KJIT_NONDET_NONE;
    default:
      return KJIT_NONDET_NONE;
  }
}

}  // namespace

const char *mnemonic_name(uint32_t mnemonic) {
  const char *s = ZydisMnemonicGetString(static_cast<ZydisMnemonic>(mnemonic));
  return s ? s : "?";
}

void Decoder::init(const kjit_os_kernel_facts *facts) {
  static_assert(sizeof(ZydisDecoder) <= sizeof(zydis_) && alignof(ZydisDecoder) <= 8,
                "Decoder::zydis_ must hold a ZydisDecoder");
  ZydisDecoderInit(reinterpret_cast<ZydisDecoder *>(zydis_), ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  have_facts_ = facts != nullptr;
  if (facts) facts_ = *facts;
}

int Decoder::thunk_register(uint64_t target) const {
  if (!have_facts_ || target == 0) return -1;
  for (int r = 0; r < KJIT_GPR_COUNT; r++) {
    if (facts_.retpoline_thunk[r] == target || facts_.its_thunk[r] == target ||
        facts_.jump_thunk[r] == target || facts_.call_thunk[r] == target)
      return r;
  }
  return -1;
}

bool Decoder::is_return_thunk(uint64_t target) const {
  if (target == 0) return false;
  if (target == facts_.return_thunk) return true;
  for (uint64_t t : facts_.return_thunks)
    if (t == target) return true;
  return false;
}

void Decoder::classify_direct(Insn *insn, bool is_call) const {
  insn->cf = is_call ? KJIT_CF_CALL : KJIT_CF_JMP;
  if (!have_facts_) return;
  uint64_t t = insn->target;
  if (!is_call && is_return_thunk(t)) {
    insn->cf = KJIT_CF_RET;  // `jmp __x86_return_thunk` (or the one patched in) is a return
    return;
  }
  if (is_call && facts_.fentry && t == facts_.fentry) {
    insn->cf = KJIT_CF_FENTRY;
    return;
  }
  int r = thunk_register(t);
  if (r >= 0) {
    // A retpoline/ITS thunk call or jump is an indirect transfer through r.
    insn->cf = is_call ? KJIT_CF_CALL_INDIRECT : KJIT_CF_JMP_INDIRECT;
    insn->indirect_reg = static_cast<uint8_t>(r);
    insn->regs_read |= static_cast<uint16_t>(1u << r);
  }
}

namespace {

// The signed value of the `size`-byte field at `bytes`.
int64_t field_value(const uint8_t *bytes, uint32_t size) {
  if (size == 1) return static_cast<int8_t>(bytes[0]);
  int32_t v;
  __builtin_memcpy(&v, bytes, 4);
  return v;
}

}  // namespace

bool Decoder::relocatable_field(const Insn &in, uint32_t *offset, uint32_t *size) {
  if (!in.pc_relative) return false;
  uint32_t off, n;
  if (in.rel_size) {
    // rel8/rel32 ends a direct branch; a call or jump keeps its plain class
    // here, so that the target's classification can be made again.
    if (in.cf != KJIT_CF_JCC && in.cf != KJIT_CF_JMP && in.cf != KJIT_CF_CALL) return false;
    if (in.rel_size != 1 && in.rel_size != 4) return false;
    n = in.rel_size;
    off = in.length - n;
  } else if (in.rip_disp_offset) {
    n = 4;
    off = in.rip_disp_offset;
  } else {
    return false;
  }
  if (off == 0 || off + n > in.length) return false;
  // The target as the CPU computes it from this field; an operand size that
  // truncates it (Zydis's rel16 rules) does not relocate.
  if (in.target != in.pc + in.length + static_cast<uint64_t>(field_value(in.bytes + off, n))) return false;
  *offset = off;
  *size = n;
  return true;
}

void Decoder::relocate(const Insn &tmpl, uint32_t offset, uint32_t size, uint64_t pc, const uint8_t *bytes,
                       Insn *out) const {
  *out = tmpl;
  out->pc = pc;
  __builtin_memcpy(out->bytes, bytes, tmpl.length);
  out->target = pc + tmpl.length + static_cast<uint64_t>(field_value(bytes + offset, size));
  if (tmpl.rel_size && (tmpl.cf == KJIT_CF_CALL || tmpl.cf == KJIT_CF_JMP))
    classify_direct(out, tmpl.cf == KJIT_CF_CALL);
}

bool Decoder::names_value(uint64_t pc, const uint8_t *bytes, uint32_t len, uint64_t value,
                          uint32_t *length) const {
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(reinterpret_cast<const ZydisDecoder *>(zydis_), bytes, len, &zi, ops)))
    return false;
  *length = zi.length;
  for (unsigned i = 0; i < zi.operand_count; i++) {
    const ZydisDecodedOperand &op = ops[i];
    ZyanU64 abs = 0;
    if (op.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
      if (op.imm.is_relative) {
        if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &op, pc, &abs)) && abs == value) return true;
      } else if (static_cast<uint64_t>(op.imm.value.s) == value) {
        return true;
      }
    } else if (op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.base == ZYDIS_REGISTER_RIP) {
      if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &op, pc, &abs)) && abs == value) return true;
    }
  }
  return false;
}

DecodeStatus Decoder::decode(uint64_t pc, const uint8_t *bytes, uint32_t len, Insn *out) const {
  if (len == 0) return DecodeStatus::kTruncated;
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  // ZydisDecoderDecodeFull in two steps: it also zeroes the operand slots
  // past operand_count, which nothing below reads (the Jcc, jmp and call
  // paths read ops[0]: those always have an operand): the memset was about
  // 2% of a build's host instructions (callgrind, kjit-sim sweep).
  const ZydisDecoder *dec = reinterpret_cast<const ZydisDecoder *>(zydis_);
  ZydisDecoderContext zctx;
  ZyanStatus st = ZydisDecoderDecodeInstruction(dec, &zctx, bytes, len, &zi);
  if (ZYAN_SUCCESS(st)) st = ZydisDecoderDecodeOperands(dec, &zctx, &zi, ops, zi.operand_count);
  if (!ZYAN_SUCCESS(st)) {
    return st == ZYDIS_STATUS_NO_MORE_DATA ? DecodeStatus::kTruncated : DecodeStatus::kInvalid;
  }
  Insn &in = *out;
  __builtin_memset(&in, 0, sizeof(in));
  in.pc = pc;
  in.length = zi.length;
  __builtin_memcpy(in.bytes, bytes, zi.length);
  in.mnemonic = zi.mnemonic;
  in.is_nop = zi.mnemonic == ZYDIS_MNEMONIC_NOP;
  in.pc_relative = (zi.attributes & ZYDIS_ATTRIB_IS_RELATIVE) != 0;
  in.indirect_reg = kNoReg;
  in.bit_offset_reg = kNoReg;
  in.loaded_value_reg = kNoReg;
  in.cf = KJIT_CF_NONE;

  if (zi.attributes & ZYDIS_ATTRIB_HAS_LOCK) in.prefixes |= kPrefixLock;
  if (zi.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE)) in.prefixes |= kPrefixRep;
  if (zi.attributes & ZYDIS_ATTRIB_HAS_REPNE) in.prefixes |= kPrefixRepne;
  if (zi.attributes & ZYDIS_ATTRIB_HAS_BRANCH_TAKEN) in.prefixes |= kPrefixHintTaken;
  if (zi.attributes & ZYDIS_ATTRIB_HAS_BRANCH_NOT_TAKEN) in.prefixes |= kPrefixHintNotTaken;

  // Registers, from explicit and hidden operands alike.
  for (unsigned i = 0; i < zi.operand_count; i++) {
    const ZydisDecodedOperand &op = ops[i];
    if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
      int r = gpr_number(op.reg.value);
      if (r < 0) continue;
      uint16_t bit = static_cast<uint16_t>(1u << r);
      if (op.actions & ZYDIS_OPERAND_ACTION_MASK_READ) in.regs_read |= bit;
      if (op.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) {
        in.regs_modified |= bit;
        // Conditional writes (cmov) and partial writes keep the old value.
        if (is_full_write(op.reg.value) && !(op.actions & ZYDIS_OPERAND_ACTION_CONDWRITE))
          in.regs_written |= bit;
        else
          in.regs_read |= bit;
      }
    } else if (op.type == ZYDIS_OPERAND_TYPE_MEMORY) {
      int b = gpr_number(op.mem.base);
      int x = gpr_number(op.mem.index);
      if (b >= 0) in.regs_read |= static_cast<uint16_t>(1u << b);
      if (x >= 0) in.regs_read |= static_cast<uint16_t>(1u << x);
      if (op.visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT && op.mem.type == ZYDIS_MEMOP_TYPE_MEM) {
        in.has_mem_operand = 1;
        in.mem_read = (op.actions & ZYDIS_OPERAND_ACTION_MASK_READ) != 0;
        in.mem_written = (op.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
        in.mem_size = static_cast<uint8_t>(op.size / 8);
        in.mem_segment = op.mem.segment == ZYDIS_REGISTER_GS   ? KJIT_SEG_GS
                         : op.mem.segment == ZYDIS_REGISTER_FS ? KJIT_SEG_FS
                                                               : KJIT_SEG_NONE;
        if (b == KJIT_REG_RSP || x == KJIT_REG_RSP) in.mem_uses_rsp = 1;
      }
      if (op.mem.base == ZYDIS_REGISTER_RIP) {
        in.pc_relative = 1;
        in.rip_disp_offset = zi.raw.disp.offset;
        ZyanU64 abs = 0;
        if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &op, pc, &abs))) in.target = abs;
      }
    }
  }

  // Flags.
  if (zi.cpu_flags) {
    const ZydisAccessedFlags &f = *zi.cpu_flags;
    in.flags_read = to_flag_bits(f.tested);
    uint8_t written = to_flag_bits(f.modified | f.set_0 | f.set_1 | f.undefined);
    in.flags_modified = written;
    if (is_shift_or_rotate(zi.mnemonic) && !shifts_by_nonzero_immediate(zi, ops)) {
      // A shift by a count that is zero at run time leaves every flag as it
      // was: the flags pass through, so they are read and not killed.
      in.flags_read |= written;
      written = 0;
    }
    in.flags_written = written;
  }

  // A register bit offset reaches beyond the memory operand (bt [r8], rax
  // tests the byte at r8 + rax / 8).
  const bool bit_test = zi.mnemonic == ZYDIS_MNEMONIC_BT || zi.mnemonic == ZYDIS_MNEMONIC_BTS ||
                        zi.mnemonic == ZYDIS_MNEMONIC_BTR || zi.mnemonic == ZYDIS_MNEMONIC_BTC;
  if (bit_test && zi.operand_count >= 2 && ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
      ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER && gpr_number(ops[1].reg.value) >= 0)
    in.bit_offset_reg = static_cast<uint8_t>(gpr_number(ops[1].reg.value));

  in.loaded_value_reg = loaded_value_register(zi, ops);
  compare_operands(zi, ops, in);

  in.nondet = classify_nondet(zi, ops);
  in.swaps_gs = zi.mnemonic == ZYDIS_MNEMONIC_SWAPGS;

  ZydisMnemonic m = zi.mnemonic;
  if (is_system_transfer(m, zi)) {
    in.cf = KJIT_CF_SYSTEM;
    return DecodeStatus::kOk;
  }
  if (is_trap(m)) {
    in.cf = KJIT_CF_TRAP;
    return DecodeStatus::kOk;
  }

  uint8_t cond = 0;
  JccKind kind;
  const ZydisDecodedOperand &op0 = ops[0];
  if (is_jcc_mnemonic(m, &cond, &kind) && zi.operand_count > 0) {
    in.cf = KJIT_CF_JCC;
    in.jcc_cond = cond;
    in.jcc_kind = kind;
    in.rel_size = static_cast<uint8_t>(zi.raw.imm[0].size / 8);
    in.pc_relative = 1;
    ZyanU64 abs = 0;
    ZydisCalcAbsoluteAddress(&zi, &op0, pc, &abs);
    in.target = abs;
    return DecodeStatus::kOk;
  }
  if ((m == ZYDIS_MNEMONIC_JMP || m == ZYDIS_MNEMONIC_CALL) && zi.operand_count > 0) {
    bool is_call = m == ZYDIS_MNEMONIC_CALL;
    if (op0.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
      in.rel_size = static_cast<uint8_t>(zi.raw.imm[0].size / 8);
      in.pc_relative = 1;
      ZyanU64 abs = 0;
      ZydisCalcAbsoluteAddress(&zi, &op0, pc, &abs);
      in.target = abs;
      classify_direct(&in, is_call);
    } else {
      in.cf = is_call ? KJIT_CF_CALL_INDIRECT : KJIT_CF_JMP_INDIRECT;
      if (op0.type == ZYDIS_OPERAND_TYPE_REGISTER) {
        int r = gpr_number(op0.reg.value);
        in.indirect_reg = r >= 0 ? static_cast<uint8_t>(r) : kNoReg;
      }
    }
    return DecodeStatus::kOk;
  }
  if (m == ZYDIS_MNEMONIC_RET) {
    in.cf = KJIT_CF_RET;
    if (zi.operand_count_visible > 0 && op0.type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
      in.ret_imm = static_cast<uint16_t>(op0.imm.value.u);
    return DecodeStatus::kOk;
  }
  return DecodeStatus::kOk;
}

}  // namespace kjit::x86
