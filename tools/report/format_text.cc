// SPDX-License-Identifier: GPL-2.0
// text: the recording's header, then functions by executed instructions and
// every block as function+0xoff/0xlen, module:function+0xoff/0xlen in a
// module (with file:line given a vmlinux or the module's debug file).
#include <algorithm>
#include <map>

#include "formats.h"

namespace kjit::report {
namespace {

void header(const Context &c) {
  const auto &m = c.rec.meta;
  auto get = [&](const char *k) { auto it = m.find(k); return it == m.end() ? std::string("-") : it->second; };
  fprintf(c.out, "# kjit record: tool %s, kernel %s, command: %s\n", get("tool").c_str(),
          get("kernel_release").c_str(), get("command").c_str());
  fprintf(c.out, "# targets: %s\n", get("targets").c_str());
  auto st = [&](const char *k) { auto it = c.rec.stats.find(k); return it == c.rec.stats.end() ? 0ull : std::stoull(it->second); };
  unsigned long long ended = st("entered") - std::min(st("entered"), st("asleep") + st("kjit_control"));
  double pct = ended ? 100.0 * (double)(st("completed") + st("task_exits")) / (double)ended : 100.0;
  fprintf(c.out, "# completion %.3f%% of %llu entries (left: native_call %llu, native_insn %llu, declined %llu,"
          " cache_full %llu, hooked %llu, nested_entry %llu, unknown %llu)\n", pct, ended, st("left_native_call"),
          st("left_native_insn"), st("left_declined"), st("left_cache_full"), st("left_hooked"),
          st("left_nested_entry"), st("left_unknown"));
}

std::string where(const Context &c, uint64_t addr) {
  LineRow row;
  if (!c.dbg || !c.dbg->line_at(addr, row)) return "";
  return row.file + ":" + std::to_string(row.line);
}

}  // namespace

int format_text(const Context &c) {
  header(c);
  if (!c.rec.calls.empty()) {
    fprintf(c.out, "%12s  %s\n", "calls", "function");
    std::vector<kjit_data_call> v = c.rec.calls;
    std::map<uint64_t, uint64_t> sum;
    for (auto &x : v) sum[x.addr] += x.count;
    std::vector<std::pair<uint64_t, uint64_t>> s(sum.begin(), sum.end());
    std::sort(s.begin(), s.end(), [](auto &a, auto &b) { return a.second > b.second; });
    for (auto &[a, n] : s) fprintf(c.out, "%12llu  %s\n", (unsigned long long)n, c.rec.name_of(a).c_str());
  }
  if (c.rec.tool() == "icount") {
    fprintf(c.out, "instructions %s\n", c.rec.stats.count("scalar0") ? c.rec.stats.at("scalar0").c_str() : "0");
    return 0;
  }
  if (c.rec.blocks.empty()) return 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> fn;  // name -> insns, blocks run
  uint64_t total = 0;
  for (const auto &b : c.rec.blocks) {
    const Symbol *s = c.rec.symbol_at(b.addr);
    auto &e = fn[s ? s->full_name() : std::string("?")];
    e.first += b.count * b.ninsn;
    e.second += b.count ? 1 : 0;
    total += b.count * b.ninsn;
  }
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> v(fn.begin(), fn.end());
  std::sort(v.begin(), v.end(), [](auto &a, auto &b) { return a.second.first > b.second.first; });
  fprintf(c.out, "\n%12s %7s %7s  %s\n", "insns", "%", "blocks", "function");
  for (auto &[name, e] : v)
    fprintf(c.out, "%12llu %6.2f%% %7llu  %s\n", (unsigned long long)e.first,
            total ? 100.0 * (double)e.first / (double)total : 0.0, (unsigned long long)e.second, name.c_str());
  fprintf(c.out, "%12llu instructions in %zu blocks\n", (unsigned long long)total, c.rec.blocks.size());
  std::vector<kjit_data_block> blocks = c.rec.blocks;
  std::sort(blocks.begin(), blocks.end(), [](auto &a, auto &b) { return a.addr < b.addr; });
  fprintf(c.out, "\n%-18s %12s %5s  %-40s %s\n", "address", "count", "insns", "block", "source");
  for (const auto &b : blocks) {
    std::string name = c.rec.name_of(b.addr);
    char len[32];
    snprintf(len, sizeof len, "/0x%x%s", b.len, b.flags & KJIT_DATA_BLOCK_FRAGMENT ? " (cut)" : "");
    fprintf(c.out, "0x%-16llx %12llu %5u  %-40s %s\n", (unsigned long long)b.addr, (unsigned long long)b.count,
            b.ninsn, (name + len).c_str(),
            where(c, b.addr).c_str());
  }
  return 0;
}

}  // namespace kjit::report
