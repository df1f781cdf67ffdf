/* SPDX-License-Identifier: GPL-2.0 */
// What the portable core asks of the instruction set, as DynamoRIO's
// core/arch/arch.h: plain functions, implemented once per ISA and bound at
// link time (CMake picks the sources; nothing is decided at run time).
//
// Where x86 knowledge may live: arch/x86/ holds everything that reads or
// writes x86 encodings through Zydis, and only files under arch/x86/ include
// <Zydis/...> (cmake/check-arch-includes.sh fails the build otherwise).
// The core names the project's own x86 vocabulary, which carries no Zydis
// type: the instruction record (arch/x86/insn.h) and the decoder that fills
// it (arch/x86/decoder.h), both through this header: no core/ file includes
// one of arch/x86/ (cmake/check-core-arch.sh).  Anything that needs an
// instruction's operands, an encoder request or a mnemonic is a function
// declared here; the code the core asks to be written, arch/emit.h's.  Tests and fuzz targets may include
// Zydis as an independent oracle for the x86 code; no host, tool or plugin
// does: kjit-report disassembles through arch/x86/disasm/, and code that
// compares Insn::mnemonic (a Zydis id) names it through arch/x86/mnemonic.h.
#pragma once
#include "arch/emit.h"
#include "arch/x86/calling_convention.h"
#include "arch/x86/decoder.h"
#include "arch/x86/insn.h"

namespace kjit {

// Clean-call inlining: a small compiled analysis routine copied into the
// block, specialised for its constant arguments (core/inliner.h has the
// cache and the list of what the specialiser does).
constexpr uint32_t kMaxInlineBytes = 160;

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
  uint16_t used_regs;        // every register it names
  uint16_t renamable_regs;   // clobbered ones a copy may exchange for dead ones
  uint8_t flags_written;
};

// The string instruction kinds of the plugin API, with the element width.
struct StringOp {
  kjit_string_op op;
  uint32_t width;  // bytes per element, 0 for KJIT_STRING_NONE
};

namespace arch {

// Specialises `routine` into `out`; false when it cannot be inlined (too
// big, uses the stack, calls out, reaches memory it cannot address).  Uses
// static scratch: callers hold the engine lock.
bool specialise_routine(const x86::Decoder &decoder, const void *routine, const InlineArgs &args,
                        bool routine_in_same_address_space, InlinedCode *out);

// Fills `code`'s used_regs and renamable_regs (called by the specialiser):
// a register it writes and takes as no argument, named only explicitly and
// never as ah..bh, in a routine without internal branches.
void note_inlined_registers(InlinedCode *code);
// Which renamable registers live at a point a copy of `code` would move to
// registers dead there, and where (map[r]); the moved set, 0 for none.
uint16_t rename_targets(const InlinedCode &code, uint16_t live_regs, uint8_t map[16]);
// That copy, with every register of rename_targets exchanged; nullptr when
// nothing moves or an instruction cannot be encoded with its new register.
// Returns static storage, valid until the next call (engine lock held).
const InlinedCode *rename_inlined_registers(const InlinedCode &code, uint16_t live_regs);

// Encodes `lea dst, [the instruction's memory operand]` into `out` (15
// bytes) for code that runs with rsp `rsp_moved_by` bytes below where the
// instruction would see it.  Returns the length, 0 when the instruction has
// no memory operand or its address is not expressible as a lea.
uint32_t encode_operand_address(const x86::Insn &insn, uint8_t dst_reg, int64_t rsp_moved_by,
                                uint8_t out[15]);

// Mnemonic classification for the plugin API's instruction queries.
bool is_cmpxchg(const x86::Insn &insn);
// The register that receives the memory's old value of an atomic
// read-modify-write (cmpxchg, xadd, xchg with memory), -1 if none.
int atomic_old_value_reg(const x86::Insn &insn);
// nop, prefetches, cache and TLB maintenance: a memory operand of theirs is
// only an address, nothing is read from it.
bool is_memory_hint(const x86::Insn &insn);
// movs, lods, stos, cmps, scas (not the SSE2 movsd/cmpsd).
StringOp string_op(const x86::Insn &insn);

}  // namespace arch
}  // namespace kjit
