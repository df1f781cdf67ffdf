/* SPDX-License-Identifier: GPL-2.0 */
// The project's own record of one decoded x86-64 instruction: everything the
// block builder, liveness and the inliner need, so that only arch/x86/
// speaks Zydis (arch/arch.h).
#pragma once
#include "kjit/plugin.h"

namespace kjit::x86 {

// Arithmetic flags as one small mask (liveness is per flag).
enum FlagBits : uint8_t {
  kFlagCF = 1, kFlagPF = 2, kFlagAF = 4, kFlagZF = 8, kFlagSF = 16, kFlagOF = 32,
  kFlagDF = 64,
};
constexpr uint8_t kAllArithFlags = kFlagCF | kFlagPF | kFlagAF | kFlagZF | kFlagSF | kFlagOF;
constexpr uint8_t kAllFlags = kAllArithFlags | kFlagDF;
constexpr uint16_t kAllGprs = 0xffff;
constexpr uint8_t kNoReg = 0xff;

enum PrefixBits : uint8_t {
  kPrefixLock = 1, kPrefixRep = 2, kPrefixRepne = 4,
  kPrefixHintTaken = 8, kPrefixHintNotTaken = 16,
};

// Conditional branches that are not plain Jcc: they have only a rel8 form.
enum class JccKind : uint8_t { kPlain, kJrcxz, kLoop, kLoope, kLoopne };

struct Insn {
  uint64_t pc;
  uint64_t target;           // direct branch target, or RIP-relative operand address
  uint32_t mnemonic;         // ZydisMnemonic
  uint16_t regs_read;        // GPR mask, bit n = KJIT_REG n (incl. implicit + address regs)
  uint16_t regs_written;     // GPRs whose whole 64-bit value is replaced
  uint16_t regs_modified;    // GPRs written at all (partial and conditional too)
  uint8_t flags_read;        // FlagBits the instruction may read
  uint8_t flags_written;     // FlagBits it certainly overwrites (kill set)
  uint8_t flags_modified;    // FlagBits it may change
  uint8_t length;
  uint8_t cf;                // kjit_cf_class
  uint8_t jcc_cond;          // condition code (low nibble of 0F 8x) for plain Jcc
  JccKind jcc_kind;
  uint8_t rel_size;          // size of a direct branch's displacement (1 or 4), else 0
  uint8_t rip_disp_offset;   // offset of the disp32 of a RIP-relative operand, 0 if none
  uint8_t indirect_reg;      // register holding an indirect target, kNoReg if memory/none
  uint8_t prefixes;          // PrefixBits
  uint8_t has_mem_operand;   // explicit memory operand present
  uint8_t mem_read;          // ... and it is read
  uint8_t mem_written;       // ... and it is written
  uint8_t mem_size;          // ... its size in bytes
  uint8_t mem_segment;       // ... 0, or kjit_segment FS/GS
  uint8_t mem_uses_rsp;      // memory operand addresses through rsp
  uint16_t ret_imm;          // ret imm16
  uint8_t nondet;            // kjit_nondet_kind: what a replay cannot recompute
  uint8_t swaps_gs;          // swapgs: GS base and the inactive one exchange
  uint8_t is_nop;            // a NOP form: no effect at all (padding, an unpatched fentry site)
  uint8_t pc_relative;       // an operand is relative to the address (a direct branch, RIP-relative memory)
  uint8_t bit_offset_reg;    // bt/bts/btr/btc mem, reg: the bit offset register, else kNoReg
  uint8_t loaded_value_reg;  // mov/movzx/movsx(d) reg, mem: the GPR whose low bytes hold what it read
  uint8_t cmp_kind[2];       // cmp/test: kjit_operand_kind of each operand, else 0 (none)
  uint8_t cmp_reg[2];        // ... the GPR of a register operand
  uint8_t cmp_size;          // ... the operand size in bytes
  uint8_t cmp_is_test;       // ... test rather than cmp
  int64_t cmp_imm;           // ... the immediate, sign-extended to 64 bits
  uint8_t bytes[15];
};

// The GPR a capture logs as the main result of a non-deterministic
// instruction (nondet != KJIT_NONDET_NONE): the one it writes outside
// rcx/rdx/rbx (which the NONDET record holds anyway), else rax.  Every GPR
// these instructions write is then in the record; rax stands for "no GPR
// result" (verr, sgdt, wrmsr...: rax is unchanged, so logging it is a no-op).
inline int nondet_result_reg(const Insn &in) {
  if (in.nondet == KJIT_NONDET_NONE) return -1;
  constexpr uint16_t kLogged = (1u << KJIT_REG_RAX) | (1u << KJIT_REG_RCX) | (1u << KJIT_REG_RDX) |
                               (1u << KJIT_REG_RBX);
  const uint16_t other = static_cast<uint16_t>(in.regs_modified & ~kLogged);
  if (other) return __builtin_ctz(other);
  if (in.regs_modified & (1u << KJIT_REG_RAX)) return KJIT_REG_RAX;
  if (in.regs_modified) return __builtin_ctz(in.regs_modified);
  return KJIT_REG_RAX;
}

// Where a counted basic block ends: kjit_cf_ends_block (include/kjit/plugin.h).
inline bool ends_counted_block(const Insn &in) {
  return kjit_cf_ends_block(static_cast<kjit_cf_class>(in.cf)) != 0;
}

struct KernelFacts;  // see decoder.h

}  // namespace kjit::x86
