/* SPDX-License-Identifier: GPL-2.0 */
// Decoder wrapper: Zydis in, kjit::x86::Insn out, with the kernel's thunks
// and fentry sites classified by address (the addresses come from the OS
// shim's kernel facts).
#pragma once
#include "arch/x86/insn.h"
#include "kjit/os_shim.h"

namespace kjit::x86 {

// The mnemonic's name (Insn::mnemonic is a Zydis id), for reports.
const char *mnemonic_name(uint32_t mnemonic);

enum class DecodeStatus { kOk, kInvalid, kTruncated };

class Decoder {
 public:
  // `facts` may be null (no thunks known: plain user-space style code).
  void init(const kjit_os_kernel_facts *facts);
  DecodeStatus decode(uint64_t pc, const uint8_t *bytes, uint32_t len, Insn *out) const;
  // Whether the instruction at `pc` names `value`: as an immediate
  // (sign-extended, as the CPU uses it), a RIP-relative address or a direct
  // branch target.  *length gets its length; false when it does not decode.
  bool names_value(uint64_t pc, const uint8_t *bytes, uint32_t len, uint64_t value, uint32_t *length) const;

  // Relocation.  What makes an instruction relative to its address is one
  // field of its bytes: a direct branch's rel8/rel32, the disp32 of a
  // RIP-relative operand.  The values of displacements and immediates
  // never change how x86 decodes the rest, so the same bytes with another
  // value there, anywhere, decode as `in` does, with another target (and,
  // for a call or jump, perhaps another class: a thunk, fentry).
  // Whether `in`, decoded at in.pc, may stand for those: its field's offset
  // and size (1 or 4) in *offset and *size.  False for every other
  // relative form (rel16, xbegin) and for a branch the target classified.
  static bool relocatable_field(const Insn &in, uint32_t *offset, uint32_t *size);
  // What decode(pc, bytes, ...) gives when `bytes` equal `tmpl`'s except
  // in its relocatable field (`offset`, `size`: relocatable_field's).
  void relocate(const Insn &tmpl, uint32_t offset, uint32_t size, uint64_t pc, const uint8_t *bytes,
                Insn *out) const;

 private:
  // Classifies a direct call/jmp by its target (thunks, fentry).
  void classify_direct(Insn *insn, bool is_call) const;
  int thunk_register(uint64_t target) const;
  bool is_return_thunk(uint64_t target) const;

  kjit_os_kernel_facts facts_{};
  bool have_facts_ = false;
  // A ZydisDecoder, held as bytes so that this header (included by the
  // core) names no Zydis type; decoder.cc checks that it fits.
  alignas(8) uint8_t zydis_[32]{};
};

}  // namespace kjit::x86
