/* SPDX-License-Identifier: GPL-2.0 */
// Register and per-flag liveness across a block and its direct successors.
// Conservative (everything live) at indirect transfers and wherever the
// engine cannot see the code.
#pragma once
#include "arch/arch.h"

namespace kjit {

struct LiveSet {
  uint16_t regs;
  uint8_t flags;
  static LiveSet all() { return {x86::kAllGprs, x86::kAllFlags}; }
  LiveSet operator|(LiveSet o) const {
    return {static_cast<uint16_t>(regs | o.regs), static_cast<uint8_t>(flags | o.flags)};
  }
};

// What must survive before `insn`, given what is live after it.
LiveSet live_before(const x86::Insn &insn, LiveSet after);

// Live-in of the code at `pc`, by decoding ahead up to its first control
// transfer (everything is live past the horizon; the flags are followed into
// the callee of a direct call, two calls deep; before a direct call into a
// compiled C function r10 and r11 are dead).  Memoised.
LiveSet live_in_at(const x86::Decoder &decoder, uint64_t pc);
// Drops the memo.  Called at every epoch reset and whenever translations
// are retired for a text change, before the change is written: a memoised
// live-in never outlives the code it describes.
void forget_liveness();

// Live-out of a block's last instruction from its direct successors.
LiveSet live_out_of_terminator(const x86::Decoder &decoder, const x86::Insn &last,
                               bool block_ended_early, uint64_t next_pc);

}  // namespace kjit
