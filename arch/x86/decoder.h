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

 private:
  // Classifies a direct call/jmp by its target (thunks, fentry).
  void classify_direct(Insn *insn, bool is_call) const;
  int thunk_register(uint64_t target) const;

  kjit_os_kernel_facts facts_{};
  bool have_facts_ = false;
  // A ZydisDecoder, held as bytes so that this header (included by the
  // core) names no Zydis type; decoder.cc checks that it fits.
  alignas(8) uint8_t zydis_[32]{};
};

}  // namespace kjit::x86
