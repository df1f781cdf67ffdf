// SPDX-License-Identifier: GPL-2.0
#include "coverage.h"

#include <algorithm>
#include <set>
#include <tuple>

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

namespace {

// Executions of a function: its first block, or the one after the 5-byte
// ftrace call at its entry (entry redirection starts there): +5, or +9
// after an ENDBR on IBT kernels, where nothing starts at +5 (inside the
// call).
uint64_t entries(const Coverage &c, uint64_t entry) {
  const uint64_t after_fentry = c.count_at(entry + 5) ? c.count_at(entry + 5) : c.count_at(entry + 9);
  return std::max(c.count_at(entry), after_fentry);
}

// One unit's functions and lines into files.
void add_unit(const RecordedUnit &u, const Coverage &c, std::map<std::string, FileLines> &files,
              std::map<uint64_t, uint64_t> &listed) {
  // (function, file, line) -> the most any of its rows ran
  std::map<std::tuple<size_t, std::string, int>, uint64_t> per_function;
  for (const UnitRow &row : u.unit.rows) {
    uint64_t n = u.mapped[row.function] ? c.count_at(row.row.addr) : 0;
    uint64_t &v = per_function[{row.function, row.row.file, row.row.line}];
    v = std::max(v, n);
  }
  for (const auto &[k, n] : per_function) files[std::get<1>(k)].lines[std::get<2>(k)] += n;
  for (size_t i = 0; i < u.unit.functions.size(); i++) {
    const UnitFunction &f = u.unit.functions[i];
    auto it = files[f.file].functions.emplace(f.name, std::make_pair(f.line, 0)).first;
    if (!u.mapped[i]) continue;
    it->second.second += entries(c, f.entry);
    for (const auto &[lo, hi] : f.ranges) listed[lo] = hi;
  }
}

bool is_listed(const std::map<uint64_t, uint64_t> &listed, uint64_t a) {
  auto it = listed.upper_bound(a);
  return it != listed.begin() && a < (--it)->second;
}

}  // namespace

std::map<std::string, FileLines> line_coverage(const Recording &r, const Coverage &c,
                                               const DebugImages &dbg) {
  std::map<std::string, FileLines> files;
  std::set<std::pair<const DebugInfo *, uint64_t>> units;
  std::set<std::string> primary, partial;
  std::map<uint64_t, uint64_t> listed;   // recorded ranges of the listed functions
  std::vector<const Symbol *> entered = c.entered(r);
  for (const Symbol *s : entered) {
    auto key = dbg.unit_key(s->addr);
    if (!key.first || !units.insert(key).second) continue;
    RecordedUnit u;
    if (!dbg.unit_at(s->addr, u)) continue;
    add_unit(u, c, files, listed);
    primary.insert(u.unit.file);
  }
  for (const Symbol *s : entered) {
    if (is_listed(listed, s->addr)) continue;
    uint64_t lo = s->addr, hi = lo + s->size;
    for (const LineRow &row : dbg.rows_in(lo, hi)) {
      uint64_t &line = files[row.file].lines[row.line];
      line = std::max(line, c.count_at(row.addr));
      partial.insert(row.file);
    }
    LineRow first;
    if (dbg.line_at(lo, first)) {
      files[first.file].functions[s->name] = {first.line, entries(c, s->addr)};
      partial.insert(first.file);
    }
  }
  for (auto &[file, fl] : files) fl.complete = primary.count(file) && !partial.count(file);
  return files;
}

}  // namespace kjit::report
