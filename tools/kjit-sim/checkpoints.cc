// SPDX-License-Identifier: GPL-2.0
#include "checkpoints.h"
#include "hex_text.h"

#include <algorithm>

namespace kjit::sim {
void Checkpoints::clear() {
  taken_.clear();
  pages_.clear();
  bytes_ = 0;
}

size_t Checkpoints::last_at_or_before(uint64_t position) const {
  auto it = std::upper_bound(taken_.begin(), taken_.end(), position,
                             [](uint64_t p, const Taken &t) { return p < t.position; });
  return it == taken_.begin() ? 0 : static_cast<size_t>(it - taken_.begin()) - 1;
}

std::string Checkpoints::take(uint64_t position, Emulator &emu, const LogServer::Position &log,
                              const std::set<uint64_t> &dirty) {
  if (!taken_.empty() && position <= taken_.back().position) return "checkpoints out of order";
  const size_t k = taken_.size();
  std::set<uint64_t> pages = dirty;
  if (k == 0) {
    pages.clear();
    for (const MappedRange &m : emu.mapped())
      if (m.perms & kPermW)
        for (uint64_t p = m.begin; p < m.end; p += kPageSize) pages.insert(p);
  }
  for (uint64_t p : pages) {
    PageCopy c{k, std::vector<uint8_t>(kPageSize)};
    if (!emu.read(p, c.bytes.data(), kPageSize)) return "checkpoint: page " + hex(p) + " unreadable";
    bytes_ += kPageSize;
    pages_[p].push_back(std::move(c));
  }
  Taken t{position, log, emu.writes().size(), emu.save_cpu()};
  if (!t.cpu.valid()) return "checkpoint: cannot save the CPU state";
  taken_.push_back(std::move(t));
  return "";
}

std::string Checkpoints::restore(size_t k, Emulator &emu, const std::set<uint64_t> &dirty) const {
  if (k >= taken_.size()) return "no checkpoint " + std::to_string(k);
  for (uint64_t p : dirty) {
    auto it = pages_.find(p);
    if (it == pages_.end()) return "restore: page " + hex(p) + " was never saved";
    const std::vector<PageCopy> &v = it->second;
    auto c = std::upper_bound(v.begin(), v.end(), k, [](size_t want, const PageCopy &pc) { return want < pc.checkpoint; });
    if (c == v.begin()) return "restore: page " + hex(p) + " has no copy at checkpoint " + std::to_string(k);
    --c;
    if (!emu.write(p, c->bytes.data(), kPageSize)) return "restore: page " + hex(p) + " unwritable";
  }
  if (!emu.restore_cpu(taken_[k].cpu)) return "restore: cannot restore the CPU state";
  emu.truncate_writes(taken_[k].writes);
  return "";
}

}  // namespace kjit::sim
