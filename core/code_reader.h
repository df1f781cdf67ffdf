/* SPDX-License-Identifier: GPL-2.0 */
// Original code read for decoding, a window at a time.  Every read goes
// through kjit_os_read_code, which in the module takes a spinlock, checks
// the range against text pokes in flight, copies it with a fault-safe copy
// and notes it as a dependency of the translation: once per instruction,
// that was a sizeable share of a block's build.  A window ends on a
// 64-byte boundary past the 15 bytes an instruction may need, so it names
// the same 64-byte chunks of text (text_deps.c's unit) as the instruction
// reads it replaces, no more.
//
// A reader lives for one decode pass under the engine lock: what it read is
// noted, by the host (a change to it retires translations) and by the
// build under way (source_deps.h: which translations a change retires).
#pragma once
#include <stdint.h>

#include "core/source_deps.h"
#include "kjit/os_shim.h"

namespace kjit {

class CodeReader {
 public:
  static constexpr uint32_t kMaxInsn = 15;

  // The bytes at `pc`, at most kMaxInsn of them (fewer where readable text
  // ends), in *bytes; 0 when none can be read.
  uint32_t at(uint64_t pc, const uint8_t **bytes) {
    // A short read ends where readable text does: reading again from pc
    // would find the same end.
    if (pc < base_ || (pc - base_ + kMaxInsn > len_ && !(ends_text_ && pc < base_ + len_))) refill(pc);
    if (pc < base_ || pc >= base_ + len_) return 0;
    const uint64_t left = base_ + len_ - pc;
    *bytes = window_ + (pc - base_);
    return left < kMaxInsn ? static_cast<uint32_t>(left) : kMaxInsn;
  }

 private:
  static constexpr uint64_t kChunk = 64;

  void refill(uint64_t pc) {
    const uint64_t end = (pc + kMaxInsn + kChunk - 1) & ~(kChunk - 1);
    base_ = pc;
    len_ = static_cast<uint32_t>(kjit_os_read_code(pc, window_, end - pc));
    ends_text_ = len_ < end - pc;
    // What was asked for, read or not: a short read ends where text does
    // (or where a write is in flight), and the translation depends on that.
    note_source_read(pc, end - pc);
  }

  uint64_t base_ = 0;
  uint32_t len_ = 0;
  bool ends_text_ = false;
  uint8_t window_[kMaxInsn + kChunk];
};

}  // namespace kjit
