// SPDX-License-Identifier: GPL-2.0
#include "core/epoch.h"

#include "core/ibl.h"
#include "core/liveness.h"

namespace kjit {

uint32_t Epoch::table_capacity(uint64_t code_bytes, uint64_t arena_bytes) {
  const uint64_t by_code = code_bytes / 64 + 16, by_arena = arena_bytes / 4 / kTableBytesPerBlock;
  return static_cast<uint32_t>(by_code < by_arena ? by_code : by_arena);
}

bool Epoch::reset() {
  forget_liveness();
  arena.reset();
  code_used = 0;
  nblocks = 0;
  generation_start = 0;
  ibl_setup(*this);
  // The table keeps twice as many slots as blocks.
  max_blocks = table_capacity(code_size, arena.size());
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
  if (!sources.init(&arena, max_blocks / 4)) return false;
  return inline_cache.init(&arena, 1024);
}

bool Epoch::renew() {
  // Room for the blocks the rest of the code region can hold, as reset()
  // sizes it for the whole region.
  uint32_t room = code_size - code_used;
  const uint32_t n = table_capacity(room, arena.size() - arena.used());
  BlockTable fresh, fresh_copies;
  SourceIndex fresh_sources;
  if (room < 4096 || !fresh.init(&arena, n * 2) || !fresh_copies.init(&arena, n / 4) ||
      !fresh_sources.init(&arena, n / 4))
    return false;
  if (!ibl_renew(*this)) return false;
  table = fresh;
  copies = fresh_copies;
  sources = fresh_sources;
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
