/* SPDX-License-Identifier: GPL-2.0 */
// Scratch state of one block translation: the decoded instructions, the
// plugin's requests, liveness.  One instance, used under the engine lock
// (far too big for a kernel stack).
#pragma once
#include "arch/arch.h"
#include "core/liveness.h"
#include "kjit/plugin.h"

namespace kjit {
struct BuildContext;
constexpr uint32_t kMaxBlockInsns = 128;
constexpr uint32_t kMaxRequests = 256;
}  // namespace kjit

// The plugin API's opaque types.
struct kjit_insn {
  kjit::x86::Insn insn;
  uint32_t index;
  uint8_t is_extable_site;
  uint8_t live_fentry;  // an fentry site, decoded as a NOP: its live byte is tested
  kjit::BuildContext *ctx;
};
struct kjit_block {
  kjit::BuildContext *ctx;
};

namespace kjit {

struct CallRequest {
  uint32_t insn_index;
  uint8_t where;        // kjit_ipoint
  uint8_t movable;      // block-level request: may be placed anywhere in the block
  uint8_t context;      // kjit_insert_context_call: routine(&mcontext), no args
  void *routine;
  uint32_t nargs;
  kjit_arg args[KJIT_MAX_ARGS];
  kjit_arg guard;       // kind 0: unconditional; else the byte that must be nonzero
};

// How the block ends when it ends before a natural control transfer.
enum class EarlyEnd : uint8_t {
  kNone,        // ends with its own control transfer
  kContinue,    // size limit: continue translating at next_pc
  kNative,      // next_pc must run natively (trap, system insn, unknown bytes)
  kHooked,      // next_pc branches to another tool's code: it runs natively
};

// A copied user access whose exception-table mirror is requested after the
// terminator (core/block_builder.cc): the first few wait for their fixup
// entry there; all are mirrored in address order, so the host's table only
// ever grows upward within a cache half (os/linux/extable.c appends in
// place).
struct PendingMirror {
  uint32_t index;     // of the instruction in the block
  uint64_t copy_at;   // its copy
  uint64_t fixup_pc;  // the original fixup; 0: a fault continues there, natively
};

// How a trace member is reached from the member before it, for plugins
// that count a run of blocks with one counter (kjit_block_runs_with_previous).
enum class RunLink : uint8_t {
  kNone,         // from elsewhere too, or from a block that may leave first
  kAlways,       // only from the previous member's end, which always goes on into it
  kUnlessTaken,  // only from its not-taken side: it runs when that branch is not taken
};

struct BuildContext {
  uint64_t pc;
  uint64_t next_pc;      // address after the last instruction
  uint32_t n;
  EarlyEnd early;
  uint8_t routine_start;
  uint8_t in_block_callback;
  // kjit_block_runs_with_previous, kjit_block_runs_unless_previous_taken,
  // kjit_block_may_lead_run (block_builder.cc)
  RunLink run_link;
  uint8_t may_lead_run;
  uint8_t cache_half;  // kjit_block_cache_half
  // The return address that the trace's own call pushed, for a `ret` ending
  // the block (block_builder.cc); 0: none known.
  uint64_t predicted_return;
  kjit_block block;
  kjit_insn insns[kMaxBlockInsns];
  LiveSet live[kMaxBlockInsns + 1];
  // Before instruction i the GS base is the task's user one: i is inside a
  // swapgs pair (load_gs_index's `swapgs; mov gs, edi; swapgs`).  Nothing
  // may be called there: every routine and the page-fault handler itself
  // address per-CPU data through GS.
  uint8_t gs_swapped[kMaxBlockInsns + 1];
  CallRequest reqs[kMaxRequests];
  uint32_t nreqs;
  PendingMirror mirrors[kMaxBlockInsns];  // of the translation being emitted
  uint32_t rejected_requests;

  bool has_terminator() const { return early == EarlyEnd::kNone; }
  bool ends_native() const { return early == EarlyEnd::kNative || early == EarlyEnd::kHooked; }
};

extern BuildContext g_build;

}  // namespace kjit
