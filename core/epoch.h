// An epoch is one half of the code cache plus one half of the arena: every
// block, exit, chain and table entry translated since the last flush.
//
// Flushing while translated code is live on other CPUs: the active epoch is
// retired (nothing new is linked into it, its memory stays intact) and
// translation continues in the other half.  A retired epoch is reused only
// after kjit_os_quiesce() proved that no CPU can still run its code.
#pragma once
#include "core/arena.h"
#include "core/block.h"
#include "core/block_table.h"
#include "core/inliner.h"

namespace kjit {

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
  InlineCache inline_cache;
  uint32_t ibl_table_offset;  // see ibl.h; ibl_routine == 0: no IBL
  uint32_t ibl_routine;
  uint32_t ibl_mask;
  Block **blocks;       // in code order (bump allocation keeps them sorted)
  uint32_t nblocks;
  uint32_t max_blocks;

  // Resets the epoch to empty; false if its arena cannot hold the tables.
  bool reset();
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
