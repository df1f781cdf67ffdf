/* SPDX-License-Identifier: GPL-2.0 */
// Which bytes of a replay gdb may read at a given instruction: never one
// the replay invented.  Known from the start: the captured code (the live
// bytes of every block the kernel ran) and the task's stack above the
// entry's return address (copied at entry; the return address itself is
// the replay's sentinel, not the kernel's, and gdb's backtrace ends
// there).  Known from the instruction
// after the one that made them: every byte the invocation wrote, every
// logged read served to it, a sleep's return slot.  The rest of what a
// replay maps (the zeros around a logged read, a scratch page before its
// first write, the stack below the entry) is not the kernel's.
#ifndef KJIT_SIM_KNOWN_MEMORY_H
#define KJIT_SIM_KNOWN_MEMORY_H

#include <cstdint>
#include <map>

#include "capture_file.h"
#include "replay_cursor.h"

namespace kjit::sim {

class KnownMemory {
 public:
  // From the capture and every range the cursor's invocation touched.
  KnownMemory(const Capture &cap, const ReplayCursor &cursor);
  KnownMemory() = default;

  // [addr, addr + size) is known from instruction `from` on, where no
  // earlier range already made it known.
  void add(uint64_t addr, uint64_t size, uint64_t from);
  // How many bytes from `addr` on, up to `len`, are known at `position`.
  uint64_t known_prefix(uint64_t addr, uint64_t len, uint64_t position) const;
  // How many bytes from `addr` on, up to `len`, are not.
  uint64_t unknown_prefix(uint64_t addr, uint64_t len, uint64_t position) const;

 private:
  struct Range {
    uint64_t end, from;
  };
  std::map<uint64_t, Range> ranges_;  // disjoint, by start
};

}  // namespace kjit::sim
#endif
