/* SPDX-License-Identifier: GPL-2.0 */
// The code the core asks the instruction set to write into the cache, as
// DynamoRIO's core asks core/arch/x86/mangle.c for "an exit to here": the
// core decides what a block, a chain or a table needs; these functions,
// implemented per ISA (arch/x86/emit_*.cc), decide its bytes.  Every one
// reports running out of room through the writer (overflowed()), never by
// writing past it.
#pragma once
#include "arch/x86/code_writer.h"
#include "arch/x86/insn.h"
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

// A jump to `target`; `patchable` when it is re-pointed later while other
// CPUs may run it (a link's jump to a translation that may be retired).
// Its field, or -1 when out of reach or out of room.
int32_t emit_jump(CodeWriter &w, uint64_t target, bool patchable);
// Fills the `n` bytes at `write` that nothing jumps to with traps.
void fill_unreachable(uint8_t *write, uint32_t n);
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

// --- A block's copy (arch/x86/emit_copy.cc) ----------------------------------

// The NOP a disabled fentry site holds: the copy holds it, whatever the
// site holds when it is read.
constexpr uint32_t kFentryNopSize = 5;
extern const uint8_t kFentryNop[kFentryNopSize];
// Whether `in` may come before a function's fentry site (endbr64, or what
// the kernel writes over a sealed one).
bool is_entry_marker(const x86::Insn &in);
// Copies `in`, its pc-relative operand re-aimed from the copy; false when
// the operand's target is out of reach from there.
bool emit_copy(CodeWriter &w, const x86::Insn &in);
// Pushes `value` touching no flag and no register (a call's original
// return address).
void emit_push_imm(CodeWriter &w, uint64_t value);
// The live test of an fentry site at `site`: goes on past what follows
// (the hooked side's exit) when the site's first byte is still its NOP's.
// Returns the offset of the rel8 emit_fentry_check_end lands, -1 when the
// writer overflowed, -2 when the site is out of reach.
int32_t emit_fentry_check(CodeWriter &w, uint64_t site, bool save_flags);
bool emit_fentry_check_end(CodeWriter &w, uint32_t rel8_at, bool save_flags);
// Points the rel8 at `rel8_at` to the writer's position; false when out of
// reach (nothing written).
bool land_rel8(CodeWriter &w, uint32_t rel8_at);
// A branch over what follows unless `cond` (an Insn::jcc_cond) holds; the
// field for land_jump, -1 on failure.
int32_t emit_branch_unless(CodeWriter &w, uint8_t cond);
// A jump to a place written later (land_jump); its field or -1.
int32_t emit_jump_placeholder(CodeWriter &w);
void land_jump(CodeWriter &w, int32_t field);
// A branch with only a short form (loop, jrcxz): the branch to a long jump
// to its taken side written next, which a short jump hops over; returns
// the offset of that hop's rel8 (land_rel8 after the taken side).
uint32_t emit_short_branch_hop(CodeWriter &w, const x86::Insn &in);
// A direct exit's jump (a jcc on `cond` >= 0), to be pointed at its stub
// and linked later while other CPUs may run it; its field or -1.
int32_t emit_exit_jump(CodeWriter &w, int cond);
// A call of native code that returns into the cache; false when out of reach.
bool emit_call(CodeWriter &w, uint64_t target);
// An indirect site's start: the target read from register `reg` where a
// chain takes it, with `pushed` bytes pushed since the original instruction.
void emit_indirect_target(CodeWriter &w, uint8_t reg, uint32_t pushed);
// A predicted return with nothing to compare: the slot is dropped, into
// the register an ABI return leaves undefined.
void emit_pop_return_slot(CodeWriter &w);
// Before the IBL: pushes the site's miss stub and jumps to the routine.
constexpr uint32_t kIblPreludeSize = 10;
void emit_ibl_prelude(CodeWriter &w, uint64_t miss_stub, uint64_t routine);

}  // namespace arch
}  // namespace kjit
