// SPDX-License-Identifier: GPL-2.0
#include "known_memory.h"

#include <algorithm>
#include <vector>

namespace kjit::sim {

KnownMemory::KnownMemory(const Capture &cap, const ReplayCursor &cursor) {
  // From the entry's stack pointer up: the slot below it holds the
  // caller's return address in the kernel, the sentinel in the replay,
  // and gdb's backtrace ends there.
  const uint64_t entry_sp = cap.regs.gpr[KJIT_REG_RSP];
  for (const Region &r : cap.regions) {
    if (r.perms & kPermX) add(r.addr, r.bytes.size(), 0);
    else if ((r.perms & kPermW) && r.end() > entry_sp)
      add(std::max(r.addr, entry_sp), r.end() - std::max(r.addr, entry_sp), 0);
  }
  for (const ReplayCursor::Touch &t : cursor.touches()) add(t.addr, t.size, t.position);
}

void KnownMemory::add(uint64_t addr, uint64_t size, uint64_t from) {
  if (size == 0) return;
  const uint64_t end = addr + size < addr ? ~uint64_t{0} : addr + size;
  // The gaps in [addr, end) between the ranges already there.
  std::vector<std::pair<uint64_t, uint64_t>> gaps;
  uint64_t at = addr;
  auto it = ranges_.upper_bound(addr);
  if (it != ranges_.begin() && std::prev(it)->second.end > addr) at = std::prev(it)->second.end;
  for (; at < end; ++it) {
    const uint64_t next = it == ranges_.end() ? end : std::min(end, it->first);
    if (next > at) gaps.emplace_back(at, next);
    if (it == ranges_.end()) break;
    at = std::max(at, it->second.end);
  }
  for (auto [b, e] : gaps) ranges_[b] = Range{e, from};
}

uint64_t KnownMemory::known_prefix(uint64_t addr, uint64_t len, uint64_t position) const {
  const uint64_t end = addr + len < addr ? ~uint64_t{0} : addr + len;
  uint64_t at = addr;
  while (at < end) {
    auto it = ranges_.upper_bound(at);
    if (it == ranges_.begin()) break;
    --it;
    if (it->second.end <= at || it->second.from > position) break;
    at = it->second.end;
  }
  return std::min(at, end) - addr;
}

uint64_t KnownMemory::unknown_prefix(uint64_t addr, uint64_t len, uint64_t position) const {
  const uint64_t end = addr + len < addr ? ~uint64_t{0} : addr + len;
  uint64_t at = addr;
  while (at < end) {
    auto it = ranges_.upper_bound(at);
    if (it != ranges_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > at) {
        if (prev->second.from <= position) break;  // known here
        at = prev->second.end;                     // known only later
        continue;
      }
    }
    at = it == ranges_.end() ? end : std::min(end, it->first);
  }
  return std::min(at, end) - addr;
}

}  // namespace kjit::sim
