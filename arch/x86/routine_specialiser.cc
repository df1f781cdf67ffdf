// SPDX-License-Identifier: GPL-2.0
// The clean-call inliner's specialiser for x86-64 (arch/arch.h:
// specialise_routine): decodes a compiled analysis routine, folds what its
// constant arguments make constant, rewrites the operands that use them
// into immediates and absolute or gs-relative addresses, re-encodes the
// rest with Zydis and re-lays out internal branches.  What it does and why
// is listed at the top of core/inliner.h, which caches its results.
#include <Zydis/Zydis.h>

#include "arch/arch.h"
#include "arch/x86/code_writer.h"
#include "arch/x86/zydis_registers.h"

namespace kjit {
namespace {

constexpr uint32_t kMaxRoutineInsns = 48;
constexpr uint32_t kMaxRoutineBytes = 512;
constexpr uint32_t kMaxFixups = 16;

// What the specialiser knows about one GPR at a point of the routine.
struct RegValue {
  uint8_t known;    // value known at translation time
  uint8_t pending;  // known but not (yet) in the register
  uint8_t percpu;   // value is a gs-relative address (per-CPU data)
  uint64_t value;
};

struct Fixup {
  uint32_t field;   // offset of a rel32 in out->code
  uint32_t target;  // index of the target instruction (== count for "end")
};

// Working storage, used under the engine lock: too large for a kernel stack.
struct Scratch {
  x86::Insn insns[kMaxRoutineInsns + 1];
  uint32_t offsets[kMaxRoutineInsns + 1];  // output offset of each insn
  uint8_t is_label[kMaxRoutineInsns + 1];
  Fixup fixups[kMaxFixups];
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  ZydisEncoderRequest req;
};
constinit Scratch g_scratch{};

int gpr_of(ZydisRegister r) { return x86::gpr_number(r); }

bool is_ignorable(uint32_t mnemonic) {
  return mnemonic == ZYDIS_MNEMONIC_NOP || mnemonic == ZYDIS_MNEMONIC_ENDBR64;
}

class Specialiser {
 public:
  Specialiser(const x86::Decoder &d, const InlineArgs &args, bool same_space, InlinedCode *out)
      : dec_(d), same_space_(same_space), out_(out), w_(out->code, 0, kMaxInlineBytes) {
    __builtin_memset(regs_, 0, sizeof(regs_));
    __builtin_memset(is_arg_, 0, sizeof(is_arg_));
    for (uint32_t i = 0; i < args.nargs && i < 6; i++) {
      uint32_t r = x86::kSysvArgRegs[i];
      is_arg_[r] = 1;
      if (args.is_const[i]) regs_[r] = {1, 1, args.is_percpu[i], args.value[i]};
      else in_reg_from_caller_ |= static_cast<uint16_t>(1u << r);
    }
  }

  bool run(const uint8_t *code);

 private:
  bool scan(const uint8_t *code);
  bool emit_one(uint32_t i, const uint8_t *code);
  bool try_fold(const x86::Insn &in);
  bool substitute_and_encode(const x86::Insn &in, uint8_t *enc, uint32_t *enc_len);
  void materialize(uint32_t r);
  void materialize_pending_written();
  void forget_written();
  bool reg_readable(uint32_t r) const {
    return regs_[r].known || (in_reg_from_caller_ >> r & 1) || (written_ >> r & 1);
  }

  const x86::Decoder &dec_;
  bool same_space_;
  InlinedCode *out_;
  x86::CodeWriter w_;
  RegValue regs_[16];
  uint8_t is_arg_[16];
  uint16_t in_reg_from_caller_ = 0;  // non-constant args, set up by the caller
  uint16_t written_ = 0;             // registers the emitted code has written
  uint16_t written_anywhere_ = 0;    // registers any routine insn writes
  uint32_t count_ = 0;
  uint32_t nfix_ = 0;
  bool has_branches_ = false;
  // A per-CPU value was lost track of (written at a join): without knowing
  // which operands address per-CPU data, the routine cannot be copied.
  bool lost_percpu_ = false;
  uint16_t percpu_base_regs_ = 0;  // registers the current insn reads as a gs: base
};

// Pass 1: decode to the last return, find internal branch targets, and
// refuse anything that would need a frame, a call or a far target.
bool Specialiser::scan(const uint8_t *code) {
  Scratch &s = g_scratch;
  uint64_t base = reinterpret_cast<uint64_t>(code);
  uint64_t furthest_target = 0;
  uint32_t off = 0;
  while (true) {
    if (count_ >= kMaxRoutineInsns || off >= kMaxRoutineBytes) return false;
    x86::Insn &in = s.insns[count_];
    if (dec_.decode(base + off, code + off, 15, &in) != x86::DecodeStatus::kOk) return false;
    // A frame, pushes or a red zone: not inlinable (the return's own use of
    // rsp is fine, it is not copied).
    if (in.cf != KJIT_CF_RET && ((in.regs_read | in.regs_modified) & (1u << KJIT_REG_RSP)))
      return false;
    if (in.flags_read & x86::kFlagDF) return false;  // string ops: keep them out
    written_anywhere_ |= in.regs_modified;
    off += in.length;
    count_++;
    switch (in.cf) {
      case KJIT_CF_NONE:
      case KJIT_CF_FENTRY:  // a NOPed-out or plain ftrace site: no effect
        continue;
      case KJIT_CF_JCC:
        if (in.jcc_kind != x86::JccKind::kPlain) return false;
        [[fallthrough]];
      case KJIT_CF_JMP:
        if (in.target < base || in.target >= base + kMaxRoutineBytes) return false;  // tail call
        has_branches_ = true;
        if (in.target > furthest_target) furthest_target = in.target;
        if (in.cf == KJIT_CF_JMP && base + off > furthest_target) return true;
        continue;
      case KJIT_CF_RET:
        if (in.ret_imm) return false;
        if (base + off > furthest_target) return true;
        continue;
      default:
        return false;
    }
  }
}

void Specialiser::materialize(uint32_t r) {
  if (!regs_[r].pending) return;
  w_.mov_reg_imm(static_cast<uint8_t>(r), regs_[r].value);
  regs_[r].pending = 0;
  written_ |= static_cast<uint16_t>(1u << r);
}

void Specialiser::materialize_pending_written() {
  for (uint32_t r = 0; r < 16; r++)
    if (regs_[r].pending && (written_anywhere_ >> r & 1)) materialize(r);
}

void Specialiser::forget_written() {
  for (uint32_t r = 0; r < 16; r++)
    if (written_anywhere_ >> r & 1) {
      if (regs_[r].known && regs_[r].percpu) lost_percpu_ = true;
      regs_[r].known = regs_[r].pending = regs_[r].percpu = 0;
    }
}

// Evaluates instructions that only compute a constant into a register.
bool Specialiser::try_fold(const x86::Insn &in) {
  Scratch &s = g_scratch;
  if (has_branches_) return false;  // keep folding to straight-line routines
  const ZydisDecodedInstruction &zi = s.zi;
  if (zi.operand_count_visible != 2 || s.ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER) return false;
  int dst = gpr_of(s.ops[0].reg.value);
  if (dst < 0 || !(in.regs_written >> dst & 1)) return false;  // only full-width writes
  bool is32 = ZydisRegisterGetClass(s.ops[0].reg.value) == ZYDIS_REGCLASS_GPR32;
  const ZydisDecodedOperand &src = s.ops[1];
  uint64_t v;
  uint8_t percpu = 0;
  switch (zi.mnemonic) {
    case ZYDIS_MNEMONIC_MOV:
      if (src.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
        v = src.imm.is_signed ? static_cast<uint64_t>(src.imm.value.s) : src.imm.value.u;
      } else if (src.type == ZYDIS_OPERAND_TYPE_REGISTER) {
        int r = gpr_of(src.reg.value);
        if (r < 0 || !regs_[r].known) return false;
        if (ZydisRegisterGetClass(src.reg.value) != ZydisRegisterGetClass(s.ops[0].reg.value))
          return false;
        v = regs_[r].value;
        percpu = regs_[r].percpu;
      } else {
        return false;
      }
      break;
    case ZYDIS_MNEMONIC_LEA: {
      if (src.mem.base == ZYDIS_REGISTER_RIP) return false;
      int b = gpr_of(src.mem.base), x = gpr_of(src.mem.index);
      if ((b >= 0 && !regs_[b].known) || (x >= 0 && !regs_[x].known)) return false;
      // A per-CPU address plus an offset stays one; a scaled or summed
      // pair of them means nothing.
      const uint8_t pb = b >= 0 && regs_[b].percpu, px = x >= 0 && regs_[x].percpu;
      if ((pb && px) || (px && src.mem.scale != 1)) return false;
      percpu = pb | px;
      v = static_cast<uint64_t>(src.mem.disp.value);
      if (b >= 0) v += regs_[b].value;
      if (x >= 0) v += regs_[x].value * src.mem.scale;
      break;
    }
    default:
      return false;
  }
  if (is32 && percpu) return false;  // a truncated address is no address
  if (is32) v &= 0xffffffffull;
  regs_[dst] = {1, 1, percpu, v};
  return true;
}

// Rewrites operands that use known registers, then encodes.  Falls back to
// the register form for any operand the encoder refuses as an immediate.
bool Specialiser::substitute_and_encode(const x86::Insn &in, uint8_t *enc, uint32_t *enc_len) {
  Scratch &s = g_scratch;
  if (!ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
          &s.zi, s.ops, s.zi.operand_count_visible, &s.req)))
    return false;
  ZydisEncoderRequest &req = s.req;
  percpu_base_regs_ = 0;
  for (uint32_t k = 0; k < req.operand_count; k++) {
    ZydisEncoderOperand &op = req.operands[k];
    // A per-CPU address held in a register (a value, not an address): a
    // store or compare of it would see the raw gs-relative offset.
    if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
      int r = gpr_of(op.reg.value);
      if (r >= 0 && regs_[r].known && regs_[r].percpu) return false;
    }
    if (op.type != ZYDIS_OPERAND_TYPE_MEMORY) continue;
    int64_t disp = op.mem.displacement;
    if (op.mem.base == ZYDIS_REGISTER_RIP) {
      // Absolute addressing is position independent for the copy.
      if (!same_space_ || !x86::fits_simm32(in.target)) return false;
      op.mem.base = ZYDIS_REGISTER_NONE;
      disp = static_cast<int64_t>(in.target);
    }
    int b = gpr_of(op.mem.base), x = gpr_of(op.mem.index);
    const bool pb = b >= 0 && regs_[b].known && regs_[b].percpu;
    const bool px = x >= 0 && regs_[x].known && regs_[x].percpu;
    if (pb || px) {
      // One per-CPU address, unscaled, accessed (lea would compute it, and
      // a segment prefix means nothing to lea), with no segment of its own.
      if ((pb && px) || (px && op.mem.scale != 1) || s.zi.mnemonic == ZYDIS_MNEMONIC_LEA ||
          (s.zi.attributes & ZYDIS_ATTRIB_HAS_SEGMENT))
        return false;
      req.prefixes |= ZYDIS_ATTRIB_HAS_SEGMENT_GS;
    }
    int64_t other = 0;  // what the non-per-CPU known registers add
    if (b >= 0 && regs_[b].known && !pb) {
      other += static_cast<int64_t>(regs_[b].value);
      op.mem.base = ZYDIS_REGISTER_NONE;
    }
    if (x >= 0 && regs_[x].known && !px) {
      other += static_cast<int64_t>(regs_[x].value * op.mem.scale);
      op.mem.index = ZYDIS_REGISTER_NONE;
      op.mem.scale = 0;
    }
    disp += other;
    if (pb || px) {
      const int pr = pb ? b : x;
      const int64_t folded = disp + static_cast<int64_t>(regs_[pr].value);
      if (x86::fits_i32(folded)) {
        disp = folded;  // gs:[disp32]: no register at all
        if (pb) op.mem.base = ZYDIS_REGISTER_NONE;
        else op.mem.index = ZYDIS_REGISTER_NONE, op.mem.scale = 0;
      } else {
        // The address does not fit a disp32: it stays in its register,
        // which the caller saves if live (gs:[reg + disp]).
        percpu_base_regs_ |= static_cast<uint16_t>(1u << pr);
      }
    }
    if (!x86::fits_i32(disp)) return false;
    op.mem.displacement = disp;
  }
  // Source registers with known values become immediates when the form allows.
  for (uint32_t k = 1; k < req.operand_count; k++) {
    ZydisEncoderOperand &op = req.operands[k];
    const ZydisDecodedOperand &dop = s.ops[k];
    if (op.type != ZYDIS_OPERAND_TYPE_REGISTER || dop.actions != ZYDIS_OPERAND_ACTION_READ) continue;
    int r = gpr_of(op.reg.value);
    if (r < 0 || !regs_[r].known) continue;
    uint64_t v = regs_[r].value;
    if (ZydisRegisterGetClass(op.reg.value) != ZYDIS_REGCLASS_GPR64 || !x86::fits_simm32(v)) continue;
    ZydisEncoderOperand saved = op;
    op.type = ZYDIS_OPERAND_TYPE_IMMEDIATE;
    op.imm.s = static_cast<int64_t>(v);
    ZyanUSize len = 15;
    if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(&req, enc, &len))) op = saved;
  }
  ZyanUSize len = 15;
  if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstruction(&req, enc, &len))) return false;
  *enc_len = static_cast<uint32_t>(len);
  return true;
}

bool Specialiser::emit_one(uint32_t i, const uint8_t *code) {
  Scratch &s = g_scratch;
  const x86::Insn &in = s.insns[i];
  if (s.is_label[i]) {
    materialize_pending_written();
    forget_written();
  }
  s.offsets[i] = w_.size();
  if (is_ignorable(in.mnemonic) || in.cf == KJIT_CF_FENTRY) return true;
  uint32_t index_of_target = 0;
  switch (in.cf) {
    case KJIT_CF_RET:
      if (i + 1 == count_) return true;  // falls off the end
      index_of_target = count_;
      break;
    case KJIT_CF_JCC:
    case KJIT_CF_JMP:
      for (index_of_target = 0; index_of_target < count_; index_of_target++)
        if (s.insns[index_of_target].pc == in.target) break;
      if (index_of_target == count_) return false;  // into the middle of an insn
      break;
    default:
      break;
  }
  if (in.cf != KJIT_CF_NONE) {
    // Both sides of a branch must see registers, not translation-time values.
    materialize_pending_written();
    if (nfix_ >= kMaxFixups) return false;
    int32_t field = in.cf == KJIT_CF_JCC ? w_.jcc(in.jcc_cond, 0) : w_.jmp(0);
    if (w_.overflowed()) return false;
    s.fixups[nfix_++] = {static_cast<uint32_t>(field < 0 ? w_.size() - 4 : field), index_of_target};
    return true;
  }

  uint64_t pc = in.pc;
  const uint8_t *bytes = code + (pc - reinterpret_cast<uint64_t>(code));
  (void)bytes;
  ZydisDecoder zd;
  ZydisDecoderInit(&zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zd, in.bytes, in.length, &s.zi, s.ops))) return false;
  if (try_fold(in)) return true;

  uint8_t enc[15];
  uint32_t enc_len = 0;
  if (!substitute_and_encode(in, enc, &enc_len)) return false;
  x86::Insn emitted;
  if (dec_.decode(0, enc, enc_len, &emitted) != x86::DecodeStatus::kOk) return false;
  // Whatever the new form still reads must really be in its register; a
  // per-CPU address only as the base of its gs: operand.
  for (uint32_t r = 0; r < 16; r++) {
    if (!(emitted.regs_read >> r & 1)) continue;
    if (regs_[r].known && regs_[r].percpu && !(percpu_base_regs_ >> r & 1)) return false;
    if (regs_[r].pending) materialize(r);
    else if (!reg_readable(r)) return false;  // reads a register it never set
    // An argument the caller must load: read before anything here wrote it.
    if (is_arg_[r] && !regs_[r].known && !(written_ >> r & 1))
      out_->needs_arg_regs |= static_cast<uint16_t>(1u << r);
  }
  w_.bytes(enc, enc_len);
  for (uint32_t r = 0; r < 16; r++) {
    if (emitted.regs_modified >> r & 1) {
      regs_[r].known = regs_[r].pending = regs_[r].percpu = 0;
      written_ |= static_cast<uint16_t>(1u << r);
    }
  }
  out_->flags_written |= emitted.flags_modified;
  return !w_.overflowed();
}

bool Specialiser::run(const uint8_t *code) {
  Scratch &s = g_scratch;
  __builtin_memset(s.is_label, 0, sizeof(s.is_label));
  if (!scan(code)) return false;
  for (uint32_t i = 0; i < count_; i++) {
    const x86::Insn &in = s.insns[i];
    if (in.cf != KJIT_CF_JCC && in.cf != KJIT_CF_JMP) continue;
    for (uint32_t t = 0; t < count_; t++)
      if (s.insns[t].pc == in.target) s.is_label[t] = 1;
  }
  for (uint32_t i = 0; i < count_; i++)
    if (!emit_one(i, code) || lost_percpu_) return false;
  s.offsets[count_] = w_.size();
  for (uint32_t f = 0; f < nfix_; f++) {
    uint32_t field = s.fixups[f].field;
    if (!w_.patch_rel32(field, s.offsets[s.fixups[f].target])) return false;
  }
  if (w_.overflowed()) return false;
  out_->size = w_.size();
  out_->clobbered_regs = written_;
  arch::note_inlined_registers(out_);
  return true;
}

}  // namespace

bool arch::specialise_routine(const x86::Decoder &decoder, const void *routine, const InlineArgs &args,
                              bool same_space, InlinedCode *out) {
  __builtin_memset(out, 0, sizeof(*out));
  Specialiser sp(decoder, args, same_space, out);
  return sp.run(static_cast<const uint8_t *>(routine));
}

}  // namespace kjit
