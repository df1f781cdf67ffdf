/* SPDX-License-Identifier: GPL-2.0 */
// The records the engine keeps per translated block, per direct exit and
// per indirect-transfer site.  All live in an epoch's arena (plain data, no
// constructors: the arena hands out zeroed memory).
#pragma once
#include "kjit/types.h"

namespace kjit {

// One direct exit of a block: the rel32 of its jmp/jcc first points at the
// block's own dispatcher stub and is back-patched to the target's
// translation once that exists.
struct Exit {
  uint64_t target_pc;
  Exit *next_waiting;    // list of exits waiting for target_pc to be built
  // The return address the function the target is in returns to, where a
  // trace knows it: a call the trace did not follow (the address it
  // pushed), or any exit from the trace's copy of a callee (the address
  // the trace's call pushed).  The dispatcher links it to a copy of the
  // target made for that address, whose returns compare with it
  // (build_call_copy), rather than to the shared translation, whose
  // returns go through a return site all the function's callers share
  // (and whose chain their first callers fill).  0 otherwise.
  uint64_t call_return;
  uint32_t field_offset; // code-region offset of the rel32 that gets patched
  uint8_t linked;
  uint8_t is_call;       // the target is entered by a call (a routine start)
  // Not 0: the exit always leaves the cache, for departure reason
  // native_why - 1.  It stays on its stub until it is first taken: the
  // dispatcher then counts it and links it to a trampoline that counts.  An
  // exit most runs never take (a live fentry site's hooked side) so gets
  // no departure site until it is.
  uint8_t native_why;
  // A retired block's forwarder (kjit_engine_retire_range): a jmp at
  // field_offset - 1, which the IBL's entry for target_pc may lead to.
  uint8_t forwards;
  uint32_t stub_offset;  // code-region offset of its dispatcher stub
  // Next exit linked to the same block (Block::incoming_exits): a retired
  // target puts each back on its stub.
  Exit *next_incoming;
};

// A predicated chain's hit that jumps to a block's translation (or a
// forwarder's): the rel32 to re-point when the block is retired.
struct LinkRef {
  uint32_t field_offset;
  LinkRef *next;
};

// One indirect transfer site (ret, jmp *x, call *x) and its predicated chain.
// 8-byte aligned like every record a stub names: Epoch::id_of keeps the
// arena offset in units of 8 bytes.
struct alignas(8) ChainSite {
  uint32_t tail_field;   // rel32 that currently leads to the miss stub
  uint32_t miss_stub;    // code-region offset of the miss stub (calls the gate)
  uint32_t fallback;     // where the chain's last link goes: the IBL prelude or the miss
                         // stub (a return site's first moves rcx into the return slot)
  uint32_t links;
  // A return site's first link is in the site itself (indirect_chain.h):
  // the disp32 its compare subtracts (0, matching nothing, until it has a
  // target) and the room for its hit's code.  0: the site has none.
  uint32_t inline_compare;
  uint32_t inline_hit;
  uint64_t last_target;  // a return site's last link's target (its next compares against it)
  uint8_t is_call;
  uint8_t is_return;     // a ret, or the return of a leaf called in place of a tail jump
  uint8_t abi_return;    // a C function's ret: rcx and the flags dead at every target
  // The block the site ends; Block is declared below.
  struct Block *owner;
};

static_assert(alignof(Exit) % 8 == 0 && alignof(ChainSite) % 8 == 0,
              "stub ids (Epoch::id_of) name records in 8-byte units");

// Cache range -> original instruction address: one entry per copied
// instruction, and one for the part of a translated transfer that does what
// the original does (a call's push of its return address).  Code the engine
// adds (instrumentation, chain preambles, stubs) has no entry: it maps to 0.
struct PcMapEntry {
  uint32_t cache_offset;  // from the block's start
  uint16_t length;
  uint16_t reserved;
  uint32_t pc_delta;      // from the block's original pc
};

struct Block {
  uint64_t orig_pc;
  uint64_t exec;            // start address in the code cache (exec view)
  uint32_t code_offset;     // start offset in the code region
  uint32_t code_size;
  uint32_t npcmap;
  PcMapEntry *pcmap;
  uint8_t ended_early;      // a fallback ended it before its natural end
  uint8_t routine_start;
  // The first block of a copy made for one return address (build_call_copy):
  // that address, its key with orig_pc in Epoch::copies.  0 elsewhere.
  uint64_t copy_return;
  // The trace it was laid out in (block_builder.cc): its first block, which
  // holds the trace's length and its index in Epoch::blocks.  A trace is
  // retired as a whole: its blocks fall through into each other.
  Block *trace;
  uint32_t trace_index;
  uint8_t trace_blocks;
  uint8_t retired;          // retired on its own (kjit_engine_retire_range)
  // What reaches the block from elsewhere in the cache: linked direct exits
  // and chain hits (the IBL's entries are found by orig_pc).
  Exit *incoming_exits;
  LinkRef *incoming_links;
};

}  // namespace kjit
