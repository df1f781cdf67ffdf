// SPDX-License-Identifier: GPL-2.0
#include "coverage.h"

#include <algorithm>
#include <set>

namespace kjit::report {

Coverage make_coverage(const Recording &r) {
  Coverage c;
  c.blocks = r.blocks;
  std::sort(c.blocks.begin(), c.blocks.end(),
            [](const kjit_data_block &a, const kjit_data_block &b) { return a.addr < b.addr; });
  return c;
}

uint64_t Coverage::count_at(uint64_t a) const {
  uint64_t n = 0;
  // Blocks are at most 4 KiB long: only those starting in [a - 4096, a] can hold a.
  auto it = std::upper_bound(blocks.begin(), blocks.end(), a,
                             [](uint64_t x, const kjit_data_block &b) { return x < b.addr; });
  while (it != blocks.begin()) {
    --it;
    if (a - it->addr >= 4096) break;
    if (a < it->addr + it->len) n += it->count;
  }
  return n;
}

std::vector<const Symbol *> Coverage::entered(const Recording &r) const {
  std::set<const Symbol *> s;
  for (const auto &b : blocks)
    if (b.count)
      if (const Symbol *sym = r.symbol_at(b.addr)) s.insert(sym);
  std::vector<const Symbol *> v(s.begin(), s.end());
  std::sort(v.begin(), v.end(), [](const Symbol *a, const Symbol *b) { return a->addr < b->addr; });
  return v;
}

std::map<std::string, FileLines> line_coverage(const Recording &r, const Coverage &c,
                                               const DebugImages &dbg) {
  std::map<std::string, FileLines> files;
  for (const Symbol *s : c.entered(r)) {
    uint64_t lo = s->addr, hi = lo + s->size;
    std::vector<LineRow> rows = dbg.rows_in(lo, hi);
    for (const LineRow &row : rows) {
      uint64_t n = c.count_at(row.addr);
      uint64_t &line = files[row.file].lines[row.line];
      line = std::max(line, n);
    }
    LineRow first;
    if (dbg.line_at(lo, first))
      files[first.file].functions[s->name] = {first.line, std::max(c.count_at(s->addr), c.count_at(s->addr + 5))};
  }
  return files;
}

}  // namespace kjit::report
