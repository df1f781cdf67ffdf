/* SPDX-License-Identifier: GPL-2.0 */
// The code the core asks the instruction set to write into the cache, as
// DynamoRIO's core asks core/arch/x86/mangle.c for "an exit to here": the
// core decides what a block, a chain or a table needs; these functions,
// implemented per ISA (arch/x86/emit_*.cc), decide its bytes.  Every one
// reports running out of room through the writer (overflowed()), never by
// writing past it.
#pragma once
#include "arch/x86/code_writer.h"
#include "kjit/engine.h"

namespace kjit {

// The code buffer every emitter writes to: the writable view of the cache,
// with displacements computed against the executable view.
using CodeWriter = x86::CodeWriter;

namespace arch {

// --- Jumps the core re-points (linker, chains, stubs) ------------------------

// Points the jump field at `field_write` (executing at `field_exec`) at
// `target`; false when out of reach.  Only for code no other CPU runs yet.
inline bool patch_jump(uint8_t *field_write, uint64_t field_exec, uint64_t target) {
  return x86::patch_rel32_at(field_write, field_exec, target);
}
// The same for a published jump, with one atomic store; false when out of
// reach or when the field could be fetched torn (the old target stays).
inline bool patch_jump_live(uint8_t *field_write, uint64_t field_exec, uint64_t target) {
  return x86::patch_rel32_live(field_write, field_exec, target);
}
// Whether code in the cache reaches `target` with a pc-relative operand
// from `from` (both ends of the cache are asked).
inline bool pc_relative_reaches(uint64_t from, uint64_t target) {
  return x86::fits_i32(static_cast<int64_t>(target - from));
}
// Whether `addr` can be an absolute operand (a sign-extended 32 bits).
inline bool absolute_addressable(uint64_t addr) { return x86::fits_simm32(addr); }

// --- Exits (arch/x86/emit_exits.cc) -------------------------------------------

// A direct exit's dispatcher stub: `call gate; .long id` (the exit's).
constexpr uint32_t kStubSize = 9;

// Writes the stub that hands exit `id` to the direct gate.
void emit_direct_stub(CodeWriter &w, uint64_t gate, uint32_t id);
// A jump to `target` wherever it is (a far jump out of rel32 reach: the
// kernel build fails it instead, CodeWriter::jmp_far).
void emit_jump_anywhere(CodeWriter &w, uint64_t target);
// A retired block's forwarder: a jump to its own stub for exit `id`, which
// the dispatcher links to the block's next translation.  Returns the jump's
// field offset (1: the opcode comes first, Exit::forwards finds it by
// that), and sets *stub to the stub's exec address; -1 on failure.
int32_t emit_forwarder(CodeWriter &w, uint64_t gate, uint32_t id, uint64_t *stub);
// Adds one to the 64-bit count at absolute address `cell` (lock-free:
// `lock inc`), or, `gs_relative`, to the per-CPU cell at that gs offset;
// keeps the flags when `keep_flags` (the exit may be anywhere in a
// function).  The caller checked absolute_addressable.
void emit_count_increment(CodeWriter &w, uint64_t cell, bool gs_relative, bool keep_flags);

// --- In-cache indirect lookup (arch/x86/emit_ibl.cc) -------------------------

// The shared IBL routine for a table of (mask + 1 + probes) 16-byte
// entries at `table_exec` (absolute_addressable), hashed by the high half
// of pc * hash_mul.  On entry: the original target where an indirect site
// leaves it, the site's miss stub on top of the stack; a hit `ret`s into
// the translation, a miss into the miss stub.
void emit_ibl_routine(CodeWriter &w, uint64_t table_exec, uint32_t mask, uint64_t hash_mul, uint32_t probes);

}  // namespace arch
}  // namespace kjit
