/* SPDX-License-Identifier: GPL-2.0 */
// The inliner: copies a small compiled analysis routine into the block,
// specialised for its constant arguments.
//
//   * constant propagation: an argument register known to hold a constant
//     becomes an immediate or an absolute address in the instructions that
//     use it;
//   * copy propagation and folding: mov/lea/xor-zero that only compute
//     constants are evaluated at translation time and disappear;
//   * dead-code elimination: a folded value is materialised only if an
//     instruction needs it in a register;
//   * re-layout: internal branches are re-emitted as rel32 and fixed up;
//   * a cache keyed by (routine, constant arguments) so each distinct call
//     is specialised once per epoch.
//
// `*counter += size` with constant counter and size comes out as one
// `add qword [abs32], imm32`: no call, no argument set-up, and it clobbers
// no register (the caller saves only the flags it writes, if they are live).
// With a per-CPU counter it is `add qword gs:[disp32], imm32` when the
// gs-relative address fits a disp32, else `mov reg, imm64` and
// `add qword gs:[reg], imm32` (the register is saved if live).  A routine
// that uses a per-CPU pointer as anything but an address is not inlined.
//
// The specialiser itself reads and re-encodes x86 (arch/arch.h:
// specialise_routine); this file keeps the cache of its results.
#pragma once
#include "arch/arch.h"
#include "core/arena.h"

namespace kjit {

class InlineCache {
 public:
  bool init(Arena *arena, uint32_t capacity);
  // Specialises `routine`, or returns nullptr when it cannot be inlined
  // (too big, uses the stack, calls out, reaches memory it cannot address).
  const InlinedCode *get(const x86::Decoder &decoder, const void *routine, const InlineArgs &args,
                         bool routine_in_same_address_space);

 private:
  struct Entry {
    const void *routine;
    InlineArgs args;
    InlinedCode *code;     // nullptr = known not inlinable
    InlinedCode *storage;  // the entry's own buffer, reused on replacement
    uint8_t used;
  };
  static constexpr uint32_t kProbeWindow = 8;
  const InlinedCode *fill(Entry &e, const x86::Decoder &decoder, const void *routine,
                          const InlineArgs &args, bool same_space);
  Arena *arena_ = nullptr;
  Entry *entries_ = nullptr;
  uint32_t mask_ = 0;
};

// The specialiser itself (exposed for tests).
inline bool inline_routine(const x86::Decoder &decoder, const void *routine, const InlineArgs &args,
                           bool routine_in_same_address_space, InlinedCode *out) {
  return arch::specialise_routine(decoder, routine, args, routine_in_same_address_space, out);
}

}  // namespace kjit
