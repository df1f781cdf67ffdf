// SPDX-License-Identifier: GPL-2.0
#include "core/epoch.h"

#include "core/ibl.h"
#include "core/liveness.h"

namespace kjit {

bool Epoch::reset() {
  forget_liveness();
  arena.reset();
  code_used = 0;
  nblocks = 0;
  generation_start = 0;
  ibl_setup(*this);
  // Sizing: a block averages well over 64 bytes of code, so code_size/64
  // bounds the number of blocks; the table keeps twice that many slots.
  max_blocks = code_size / 64 + 16;
  blocks = arena.alloc_array<Block *>(max_blocks);
  if (!blocks) return false;
  // Distinct native targets (stop addresses, functions never translated):
  // a few hundred for every system call attached, fewer in small caches.
  nnative_exits = 0;
  max_native_exits = code_size / 256 + 16 < 1024 ? code_size / 256 + 16 : 1024;
  native_exits = arena.alloc_array<NativeExit>(max_native_exits);
  if (!native_exits) return false;
  // Copies: a quarter as many; with the table full, calls get the shared
  // translations.
  if (!table.init(&arena, max_blocks * 2) || !copies.init(&arena, max_blocks / 4)) return false;
  return inline_cache.init(&arena, 1024);
}

bool Epoch::renew() {
  // Room for the blocks the rest of the code region can hold, as reset()
  // sizes it for the whole region.
  uint32_t room = code_size - code_used;
  BlockTable fresh, fresh_copies;
  if (room < 4096 || !fresh.init(&arena, (room / 64 + 16) * 2) || !fresh_copies.init(&arena, (room / 64 + 16) / 4))
    return false;
  if (!ibl_renew(*this)) return false;
  table = fresh;
  copies = fresh_copies;
  generation_start = nblocks;
  // Liveness was computed from the code as it was; decodes are checked
  // against the bytes they came from (decode_cache.h).
  forget_liveness();
  return true;
}

Block *Epoch::block_containing(uint64_t exec) const {
  uint32_t lo = 0, hi = nblocks;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (blocks[mid]->exec + blocks[mid]->code_size <= exec) lo = mid + 1;
    else hi = mid;
  }
  if (lo < nblocks && blocks[lo]->exec <= exec) return blocks[lo];
  return nullptr;
}

}  // namespace kjit
