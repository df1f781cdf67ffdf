/* SPDX-License-Identifier: GPL-2.0 */
// Hash table from original address to cached block, open addressing with
// linear probing.  Each slot also heads the list of exits waiting for that
// address, so "link when built" needs no second table.
#pragma once
#include "core/arena.h"
#include "core/block.h"

namespace kjit {

struct TableSlot {
  uint64_t pc;       // 0 = empty (address 0 is never code)
  Block *block;
  Exit *waiting;
};

class BlockTable {
 public:
  // Capacity is rounded down to a power of two.  False if the arena is full.
  bool init(Arena *arena, uint32_t capacity);
  Block *find(uint64_t pc) const;
  // The slot for `pc`, inserted if absent; nullptr when the table is too
  // full (the engine then treats the epoch as full).
  TableSlot *slot(uint64_t pc);
  // pc's slot no longer holds `b` (a retired translation), if it did; the
  // slot keeps pc, so probes for others still pass it, and pc's next
  // translation takes it again.
  void forget(uint64_t pc, const Block *b);
  uint32_t used() const { return used_; }

 private:
  static uint32_t hash(uint64_t pc) {
    pc ^= pc >> 29;
    pc *= 0xbf58476d1ce4e5b9ull;
    pc ^= pc >> 32;
    return static_cast<uint32_t>(pc);
  }
  TableSlot *slots_ = nullptr;
  uint32_t mask_ = 0;
  uint32_t used_ = 0;
};

}  // namespace kjit
