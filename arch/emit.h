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

// --- Indirect chains and returns (arch/x86/emit_indirect.cc) -----------------
// The protocol (where the target and the program's registers are, what a
// link, a return site and a fallback do) is core/indirect_chain.h's.  Each
// compare returns the writer offset of its jump toward `fallback` (the
// chain's new tail), or -1; the hit's code follows it.

// Whether `pc` can be a chain link's or predicted return's immediate.
bool chain_target_encodable(uint64_t pc);
// Whether a return link may compare with `pc` after one for `previous`.
bool return_compare_encodable(uint64_t pc, uint64_t previous);
// A link of a jmp*/call* chain.
int32_t emit_chain_compare(CodeWriter &w, uint64_t pc, uint64_t fallback);
// A return site's later link, after one for `previous`.
int32_t emit_return_compare(CodeWriter &w, uint64_t pc, uint64_t previous, uint64_t fallback);
// An ABI return site's later link.
int32_t emit_abi_return_compare(CodeWriter &w, uint64_t pc, uint64_t fallback);
// A jmp*/call* link's hit, before its jump: the program's registers back.
void emit_chain_hit_restore(CodeWriter &w);
// A return link's hit, before the translation or the native return.
void emit_return_hit_restore(CodeWriter &w, bool abi_return);
// Drops the return slot (a hit going on at the translation).
void emit_drop_return_slot(CodeWriter &w);
// The original return to the address in the slot.
void emit_native_return(CodeWriter &w);
// The 32-bit operand a return site's own link holds for `pc` (stored live).
uint32_t return_compare_operand(uint64_t pc, bool abi_return);

// Writer offsets of a return site's parts.
struct ReturnSiteFields {
  uint32_t compare;  // its own link's operand (return_compare_operand)
  uint32_t tail;     // the jump toward the fallback
  uint32_t hit;      // `hit_room` bytes for its own link's hit
};
void emit_return_site(CodeWriter &w, bool abi_return, uint32_t hit_room, ReturnSiteFields *f);
// A return site's fallback before the IBL or the gate, and its size.
uint32_t return_fallback_size(bool abi_return);
void emit_return_fallback(CodeWriter &w, bool abi_return);
// A return whose target `pc` a trace knows: the compare, and the offset of
// its rel8 toward the hit, or -1 (nothing written).
int32_t emit_predicted_return(CodeWriter &w, uint64_t pc, bool flags_dead, bool rcx_dead);

}  // namespace arch
}  // namespace kjit
