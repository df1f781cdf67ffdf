// SPDX-License-Identifier: GPL-2.0
#include "core/retire.h"

#include "core/block_builder.h"
#include "core/engine_state.h"
#include "core/ibl.h"
#include "core/linker.h"

namespace kjit {

// A forwarder for `b`, retired: a patchable jmp on its own stub, which the
// dispatcher links to b's next translation (kjit_engine_direct_exit).  What
// led to b now leads here.  0 when the epoch has no room.
static uint64_t emit_forwarder(Epoch &e, const Block *b) {
  constexpr uint32_t kForwarderBytes = 3 + 5 + arch::kStubSize;
  Exit *x = e.arena.alloc_array<Exit>(1);
  // The jmp's rel32 on a 4-byte boundary, its opcode first: no padding
  // prefix, so the forwarder is found from the exit (Exit::forwards).
  const uint32_t start = ((e.code_used + 1 + 3) & ~3u) - 1;
  if (!x || start + kForwarderBytes > e.code_size) return 0;
  CodeWriter w(e.write_at(start), e.exec_at(start), e.code_size - start);
  uint64_t stub = 0;
  const int32_t field = arch::emit_forwarder(w, g_engine.facts.gate_direct, e.id_of(x), &stub);
  if (field < 0) return 0;
  x->target_pc = b->orig_pc;
  x->is_call = b->routine_start;
  x->call_return = b->copy_return;  // a copy's forwarder leads to a new copy
  x->forwards = 1;
  x->field_offset = start + static_cast<uint32_t>(field);
  x->stub_offset = static_cast<uint32_t>(stub - e.code_exec);
  arch::fill_unreachable(e.write_at(e.code_used), start - e.code_used);
  e.code_used = start + w.size();
  kjit_os_code_written(e.exec_at(start), w.size());
  return e.exec_at(start);
}

// Retires the trace whose first block is `head`: nothing reaches any of its
// blocks from now on but a task already inside.  False when that could not
// be done (no room for a forwarder, a jump that could not be patched).
static bool retire_trace_locked(Epoch &e, Block *head) {
  for (uint32_t k = head->trace_index; k < head->trace_index + head->trace_blocks && k < e.nblocks; k++) {
    Block *b = e.blocks[k];
    const bool in_ibl = !b->copy_return && ibl_lookup(e, b->orig_pc) == b->exec;
    uint64_t forward = 0;
    if (b->incoming_links || in_ibl) {
      forward = emit_forwarder(e, b);
      if (!forward) return false;
    }
    if (!unlink_incoming(e, b, forward)) return false;
    if (in_ibl) ibl_redirect(e, b->orig_pc, b->exec, forward);
    if (b->copy_return) e.copies.forget(Epoch::copy_key(b->orig_pc, b->copy_return), b);
    else e.table.forget(b->orig_pc, b);
    g_engine.stats.blocks_retired++;
  }
  head->retired = 1;
  g_engine.stats.traces_retired++;
  return true;
}

int retire_readers_locked(Epoch &e, uint64_t addr, uint64_t len) {
  if (!e.sources.complete()) return -1;
  int traces = 0;
  bool ok = true;
  e.sources.for_each_reader(addr, addr + len, [&](Block *head) {
    if (ok && !head->retired) {
      ok = retire_trace_locked(e, head);
      traces++;
    }
  });
  return ok ? traces : -1;
}

}  // namespace kjit
