/* SPDX-License-Identifier: GPL-2.0 */
// Traces: which blocks one build lays out in a row, and publishing them.
// Where a block ends in a jump (or a not-taken side, or a call) to a block
// not built yet, that block is emitted in place of the jump (up to
// EngineOptions::max_trace_blocks); a call's target is laid out as the
// trace's own copy, whose return compares with the address the call pushed.
// The stubs of all the blocks follow the last.  Policy only: emitting one
// block is core/block_builder.h's.
#pragma once
#include "core/block_builder.h"

namespace kjit {

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

// Whether a block that runs with the decoded one (kjit_block_runs_with_
// previous, kjit_block_runs_unless_previous_taken) may follow it in a
// trace, the decoded block at `depth`: no user access whose fault would
// continue elsewhere, and an end that goes on to the one target a trace
// would lay out as a copy (at depth > 0), always or when its branch is not
// taken.  The trace may still end there (its length, a follower it cannot
// build).
bool may_lead_run(const BuildContext &ctx, uint32_t depth);

}  // namespace kjit
