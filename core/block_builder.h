/* SPDX-License-Identifier: GPL-2.0 */
// The dynamic-block builder: decodes from an entry address to the first
// control transfer, lets the plugins instrument the block, computes
// liveness, places and emits the instrumentation, copies the body with
// RIP-relative operands rewritten, and ends the block with exit stubs.
// It decides what each instruction becomes; arch/emit.h writes the bytes.
// Which blocks follow one another in a trace is core/trace.h's choice.
#pragma once
#include "arch/arch.h"
#include "core/build_context.h"
#include "core/epoch.h"

namespace kjit {

// Blocks one build_block may lay out in a row (EngineOptions caps it lower).
constexpr uint32_t kMaxTraceBlocks = 16;

enum class BuildResult {
  kBuilt,
  kDeclined,    // the code at pc must run natively
  kCacheFull,   // the epoch has no room: flush and retry
  kHooked,      // pc itself enters another tool's code (kjit_os_is_text)
};

// User accesses per block whose faults continue in the cache (at more, a
// fault continues at the original fixup, natively).
constexpr uint32_t kMaxExtableFixups = 4;

// A block's direct exits: a live fentry site's hooked side, the
// terminator's two, the fixups'.
constexpr uint32_t kMaxExits = 3 + kMaxExtableFixups;

struct ExitPlan {
  Exit *exits[kMaxExits];  // in emission order; a tail exit is the terminator's, last
  uint32_t nexits;
  ChainSite *chain;
  // The block's code ends in an unconditional jump to a block not laid out
  // yet (exits[nexits - 1]), at writer offsets [tail_at, tail_end): a trace
  // may put that block there instead (build_block).
  Exit *tail;
  uint32_t tail_at, tail_end;
  uint8_t tail_always;       // every run of the block ends in the tail
  uint64_t call_return;      // the tail is a call that pushed this return address
  uint8_t predicted;         // the block ends in a predicted return
  uint8_t predicted_return;  // ... and its tail goes where it returns to
  uint8_t unchecked;         // ... with no compare (Emitter::predicted_return)
  uint8_t tail_not_taken;    // the tail is a conditional branch's not-taken side
};

// One block of a trace, emitted but not published.
struct TraceMember {
  Block *block;
  TableSlot *slot;
  ExitPlan plan;
  uint32_t end;        // code-region offset after its code (stubs excluded)
  uint32_t stub_bytes;
  // Calls the trace followed and has not returned from before this block,
  // and the frame it runs in (0: the first block's).  A block at depth > 0
  // is the trace's own copy, not published: only the trace's path reaches
  // it, so a return it ends with goes where the trace's call said.
  uint32_t depth, frame;
  bool leaves_only_at_end;  // no user access whose fault continues elsewhere
};

// Decodes, instruments and emits the block at `pc` at code-region offset
// `start`, after `pending` unpublished blocks whose stubs need `reserve`
// bytes, leaving room for those and its own.  `follower`: the
// block would be laid out after the trace's last member; one with user
// accesses is not (its exception-table mirrors must stay in address order
// even when the layout is given up).  `depth`: its depth in the trace;
// `link`: how the member before it reaches it.  Fills *m but its depth and
// frame; publishes nothing.
BuildResult emit_block(Epoch &epoch, uint64_t pc, bool routine_start, uint32_t start, uint32_t pending,
                       uint32_t reserve, bool follower, uint64_t predicted_return, uint32_t depth,
                       RunLink link, TraceMember *m);

// Dispatcher stubs of one block, `call gate; .long id`, written by `w` at
// code-region offset `base` (after the trace the block is part of).
bool emit_stubs(Epoch &epoch, CodeWriter &w, uint32_t base, const ExitPlan &plan);

// The return slot of a trace's callee holds the address the trace's call
// pushed, unless something wrote it since.  In a compiled C function (one
// with an fentry site, kjit_os_c_abi_return) only a hook run at its entry
// writes it (a kretprobe, rethook or function-graph return trampoline, a
// BPF trampoline): the compiler's own code never does.  And a translation
// with a known return address never runs one: it was entered at the copy of
// the function's start, where a live fentry site (its target is not text to
// the OS, ftrace's own trampolines included) or a probe's int3 ends the
// block and runs natively from there on (decode_block: kHooked, kNative),
// and a site enabled later is not in the copy.  So such a return is the
// slot's pop and the caller's continuation, with nothing to compare.  Other
// code (assembly that switches stacks, a retpoline thunk) keeps the compare.
// The slot is popped into rcx (1 byte), which by the SysV ABI no caller of
// a C function reads after it returns (as at an ABI return site).
bool return_slot_untouched(const x86::Insn &in);

// Decodes the block at `pc` into g_build only (the sweep's decode half and
// the first step of build_block).  False when the block must be declined.
bool decode_block(uint64_t pc);

}  // namespace kjit
