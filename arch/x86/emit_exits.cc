// SPDX-License-Identifier: GPL-2.0
// Direct exits, their stubs and counts (arch/emit.h).
#include "arch/emit.h"

namespace kjit::arch {

void emit_direct_stub(CodeWriter &w, uint64_t gate, uint32_t id) {
  w.call(gate);
  w.u32(id);
}

int32_t emit_jump(CodeWriter &w, uint64_t target, bool patchable) {
  return patchable ? w.jmp_patchable(target) : w.jmp(target);
}

void fill_unreachable(uint8_t *write, uint32_t n) { __builtin_memset(write, 0xcc, n); }  // int3

void emit_jump_anywhere(CodeWriter &w, uint64_t target) {
  if (w.jmp(target) < 0 && !w.overflowed()) w.jmp_far(target);
}

int32_t emit_forwarder(CodeWriter &w, uint64_t gate, uint32_t id, uint64_t *stub) {
  const int32_t field = w.jmp(w.here());
  *stub = w.here();
  emit_direct_stub(w, gate, id);
  if (field != 1 || w.overflowed() || !w.patch_rel32(static_cast<uint32_t>(field), *stub)) return -1;
  return field;
}

void emit_count_increment(CodeWriter &w, uint64_t cell, bool gs_relative, bool keep_flags) {
  static const uint8_t kIncGsAbs32[] = {0x65, 0x48, 0xff, 0x04, 0x25};    // incq gs:[disp32]
  static const uint8_t kLockIncAbs32[] = {0xf0, 0x48, 0xff, 0x04, 0x25};  // lock incq [disp32]
  if (keep_flags) w.pushfq();
  // A per-CPU cell is only this CPU's: no lock needed.
  if (gs_relative) w.bytes(kIncGsAbs32, sizeof(kIncGsAbs32));
  else w.bytes(kLockIncAbs32, sizeof(kLockIncAbs32));
  w.u32(static_cast<uint32_t>(cell));
  if (keep_flags) w.popfq();
}

}  // namespace kjit::arch
