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
#pragma once
#include "arch/x86/decoder.h"
#include "core/arena.h"

namespace kjit {

constexpr uint32_t kMaxInlineBytes = 160;
constexpr uint32_t kSysvArgRegs[6] = {KJIT_REG_RDI, KJIT_REG_RSI, KJIT_REG_RDX,
                                      KJIT_REG_RCX, KJIT_REG_R8,  KJIT_REG_R9};

struct InlineArgs {
  uint32_t nargs;
  uint8_t is_const[6];
  // The constant is a gs-relative address (per-CPU data): memory operands
  // built from it get a gs prefix, and it is never used as a plain value.
  uint8_t is_percpu[6];
  uint64_t value[6];
};

struct InlinedCode {
  uint8_t code[kMaxInlineBytes];
  uint32_t size;
  uint16_t clobbered_regs;   // registers the code writes (caller saves live ones)
  uint16_t needs_arg_regs;   // non-constant argument registers it reads
  uint8_t flags_written;
};

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
bool inline_routine(const x86::Decoder &decoder, const void *routine, const InlineArgs &args,
                    bool routine_in_same_address_space, InlinedCode *out);

}  // namespace kjit
