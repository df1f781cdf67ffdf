/* SPDX-License-Identifier: GPL-2.0 */
// x86-64 disassembly for user-space tools (kjit-report): instruction
// lengths, control transfers and AT&T text over bytes read from a vmlinux.
// Not part of the engine (it needs libc and Zydis's formatter, which the
// kernel build leaves out); the engine decodes through arch/x86/decoder.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace kjit::x86::disasm {

// The instruction at `bytes` (running address `addr`) in AT&T syntax.
// False when the bytes do not decode.
bool att_text(uint64_t addr, const uint8_t *bytes, size_t size, std::string *text, uint32_t *length);

// One instruction with its operands: its length (0 when the bytes do not
// decode) and, for a conditional branch (jcc, jrcxz, loop*), its target.
struct ConditionalBranch {
  bool is_conditional;
  uint64_t target;
};
uint32_t decode_branch(uint64_t addr, const uint8_t *bytes, size_t size, ConditionalBranch *out);

// One instruction without its operands: its length (0 when the bytes do not
// decode), and whether it transfers control (a branch, call, return,
// system instruction or interrupt), which ends a block.
uint32_t decode_transfer(const uint8_t *bytes, size_t size, bool *transfers_control);

}  // namespace kjit::x86::disasm
