/* SPDX-License-Identifier: GPL-2.0 */
// The code cache.  The host hands the engine two memories once, at init:
// the code region (translated blocks, exit stubs, indirect chains, the IBL
// table and routine) and the arena (the engine's records about that code:
// Block, Exit, ChainSite, the block table, the pc maps).  Both are split in
// two halves, and an Epoch is one half of each: everything translated since
// the epoch was last reset.  Nothing in an epoch is ever freed on its own;
// code and records are bump-allocated and dropped together by reset().
//
// Flushing while translated code is live on other CPUs: the active epoch is
// retired (nothing new is built or linked into it, its memory stays intact,
// running code in it keeps working) and translation continues in the other
// half.  A retired epoch becomes free, and can be reset for reuse, only
// after kjit_os_quiesce() proved that no CPU can still run its code
// (kjit_engine_reclaim in core/engine.cc).  A full epoch flushes the same
// way; when the other half is still retired, the engine declines to
// translate (native execution) until the host reclaims it.
//
// A retirement for a text change while the other half still waits for its
// reclaim does not stop translation: the active epoch starts a new
// generation in place (renew()).  What the old generation built stays where
// it is and keeps running for the tasks inside it, but nothing can reach it
// any more from outside: the block table and the IBL table are new, and
// every later translation and link comes from them.  Its memory comes back
// with the whole epoch's, after the epoch fills and retires.
#pragma once
#include "core/arena.h"
#include "core/block.h"
#include "core/block_table.h"
#include "core/inliner.h"
#include "core/source_deps.h"

namespace kjit {

// A counting trampoline to native code (core/departures.h).
struct NativeExit {
  uint64_t target;
  uint32_t code_offset;
  uint8_t why;          // enum kjit_departure
  bool keep_flags;
};

enum class EpochState : uint8_t { kFree, kActive, kRetired };

struct Epoch {
  EpochState state;
  uint8_t index;
  Arena arena;
  uint8_t *code_write;
  uint64_t code_exec;
  uint32_t code_size;
  uint32_t code_used;
  BlockTable table;
  // Copies made for one return address (build_call_copy), by
  // copy_key(pc, return address); a slot's block is the copy only if its
  // orig_pc and copy_return match (a key two copies share keeps the first).
  BlockTable copies;
  InlineCache inline_cache;
  uint32_t ibl_table_offset;  // see ibl.h; ibl_routine == 0: no IBL
  uint32_t ibl_routine;
  uint32_t ibl_mask;
  NativeExit *native_exits;
  uint32_t nnative_exits;
  uint32_t max_native_exits;
  Block **blocks;       // in code order (bump allocation keeps them sorted)
  uint32_t nblocks;
  uint32_t max_blocks;
  uint32_t generation_start;  // blocks[] index of the generation's first block
  // The generation's traces by the text they were built from.
  SourceIndex sources;

  static uint64_t copy_key(uint64_t pc, uint64_t ret) { return pc ^ (ret * 0x9e3779b97f4a7c15ull) ^ 1; }
  // The copy of `pc` made for return address `ret`, or nullptr.
  Block *find_copy(uint64_t pc, uint64_t ret) const {
    Block *b = copies.find(copy_key(pc, ret));
    return b && b->orig_pc == pc && b->copy_return == ret ? b : nullptr;
  }

  // Resets the epoch to empty; false if its arena cannot hold the tables.
  bool reset();
  // Blocks the tables are sized for, for `code_bytes` of code and
  // `arena_bytes` of arena: one per 64 bytes of code (a block averages well
  // over that), but never so many that the tables take more than a quarter
  // of the arena, whose rest the blocks' own records (exits, chain sites,
  // liveness: a few hundred bytes each) need.
  static uint32_t table_capacity(uint64_t code_bytes, uint64_t arena_bytes);
  static constexpr uint64_t kTableBytesPerBlock =
      sizeof(Block *) + 2 * sizeof(TableSlot) + sizeof(TableSlot) / 4 + 1 + sizeof(void *) / 2;
  // Starts a new generation (above); false, and nothing changed, if the
  // epoch has no room left for a block table and an IBL table.
  bool renew();
  bool generation_empty() const { return nblocks == generation_start; }
  // The state as the lock-free entry path reads it (kjit_engine_enter),
  // and its writers under the engine lock.
  EpochState load_state() const {
    return static_cast<EpochState>(__atomic_load_n(reinterpret_cast<const uint8_t *>(&state), __ATOMIC_ACQUIRE));
  }
  void store_state(EpochState s) {
    __atomic_store_n(reinterpret_cast<uint8_t *>(&state), static_cast<uint8_t>(s), __ATOMIC_RELEASE);
  }
  bool contains_exec(uint64_t a) const { return a >= code_exec && a < code_exec + code_size; }
  uint8_t *write_at(uint32_t offset) const { return code_write + offset; }
  uint64_t exec_at(uint32_t offset) const { return code_exec + offset; }
  Block *block_containing(uint64_t exec) const;

  // Exit and chain ids: epoch index in bit 31, arena offset / 8 below.
  uint32_t id_of(const void *record) const {
    return (static_cast<uint32_t>(index) << 31) | static_cast<uint32_t>(arena.offset_of(record) >> 3);
  }
  void *record_of(uint32_t id) const { return arena.at(static_cast<uint64_t>(id & 0x7fffffffu) << 3); }
};

}  // namespace kjit
