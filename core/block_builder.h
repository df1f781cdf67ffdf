/* SPDX-License-Identifier: GPL-2.0 */
// The dynamic-block builder: decodes from an entry address to the first
// control transfer, lets the plugins instrument the block, computes
// liveness, places and emits the instrumentation, copies the body with
// RIP-relative operands rewritten, and ends the block with exit stubs.
#pragma once
#include "core/epoch.h"

namespace kjit {

// A direct exit's dispatcher stub: `call gate; .long id` (the exit's).
constexpr uint32_t kStubSize = 9;

// Blocks one build_block may lay out in a row (EngineOptions caps it lower).
constexpr uint32_t kMaxTraceBlocks = 16;

enum class BuildResult {
  kBuilt,
  kDeclined,    // the code at pc must run natively
  kCacheFull,   // the epoch has no room: flush and retry
  kHooked,      // pc itself enters another tool's code (kjit_os_is_text)
};

// Builds the block at `pc` into `epoch`; on kBuilt *out is registered in
// the epoch's table and linked with every exit waiting for it.  Where the
// block ends in an unconditional jump to a block not built yet, that block
// is built right after it instead of the jump (a trace, up to
// max_trace_blocks), and so on; the stubs of them all follow the last.
BuildResult build_block(Epoch &epoch, uint64_t pc, bool routine_start, Block **out);

// Builds a copy of the code at `pc` for one return address: that of the
// function it is in, `call_return` (Exit::call_return).  A trace whose
// first block is at depth 1, as the callee of a call a trace follows, so
// its returns compare with call_return (indirect_chain.h:
// emit_predicted_return); its first block goes in the epoch's copies
// table (one copy per pc and return address), the rest in no table.
BuildResult build_call_copy(Epoch &epoch, uint64_t pc, bool routine_start, uint64_t call_return, Block **out);

// Decodes the block at `pc` into g_build only (the sweep's decode half and
// the first step of build_block).  False when the block must be declined.
bool decode_block(uint64_t pc);

}  // namespace kjit
