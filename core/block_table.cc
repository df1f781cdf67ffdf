// SPDX-License-Identifier: GPL-2.0
#include "core/block_table.h"

namespace kjit {

bool BlockTable::init(Arena *arena, uint32_t capacity) {
  uint32_t cap = 1;
  while (cap * 2 <= capacity) cap *= 2;
  slots_ = arena->alloc_array<TableSlot>(cap);
  if (!slots_) return false;
  mask_ = cap - 1;
  used_ = 0;
  return true;
}

Block *BlockTable::find(uint64_t pc) const {
  for (uint32_t i = hash(pc) & mask_, n = 0; n <= mask_; i = (i + 1) & mask_, n++) {
    if (slots_[i].pc == pc) return slots_[i].block;
    if (slots_[i].pc == 0) return nullptr;
  }
  return nullptr;
}

void BlockTable::forget(uint64_t pc, const Block *b) {
  for (uint32_t i = hash(pc) & mask_, n = 0; n <= mask_; i = (i + 1) & mask_, n++) {
    if (slots_[i].pc == pc) {
      if (slots_[i].block == b) slots_[i].block = nullptr;
      return;
    }
    if (slots_[i].pc == 0) return;
  }
}

TableSlot *BlockTable::slot(uint64_t pc) {
  for (uint32_t i = hash(pc) & mask_, n = 0; n <= mask_; i = (i + 1) & mask_, n++) {
    if (slots_[i].pc == pc) return &slots_[i];
    if (slots_[i].pc == 0) {
      // Keep probes short: at 3/4 load the epoch counts as full.
      if ((used_ + 1) * 4 > (mask_ + 1) * 3) return nullptr;
      slots_[i].pc = pc;
      used_++;
      return &slots_[i];
    }
  }
  return nullptr;
}

}  // namespace kjit
