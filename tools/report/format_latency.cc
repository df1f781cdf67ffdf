// SPDX-License-Identifier: GPL-2.0
// latency: per function, a histogram of its call durations (ns) in
// bpftrace's hist() layout: "@duration_ns[func]:", then power-of-two
// buckets "[4, 8)   12 |@@@@@   |" from the lowest to the highest bucket
// that holds a call, functions with fewer calls first (as bpftrace prints
// a map).  Durations come from a callstack recording's call trees
// (call_tree.h); calls whose return was not seen are left out and counted
// on the first line.  Instructions per call are not in any recording (the
// callstack tool's events carry no instruction count, bbcount's counts
// are per block over the whole run), so there is no histogram of them.
#include <algorithm>
#include <cinttypes>
#include <map>
#include <string>
#include <vector>

#include "call_tree.h"
#include "formats.h"

namespace kjit::report {
namespace {

// bpftrace's bucket of v: 0 -> [0], 1 -> [1], else [2^k, 2^(k+1)) is k + 1.
int bucket(uint64_t v) {
  return v == 0 ? 0 : 64 - __builtin_clzll(v);
}

// 2^power as bpftrace labels it: 512, 1K, 2K, ..., 1M, ...
std::string power_label(int power) {
  static const char kSuffix[] = "\0KMGTPE";
  int decade = power / 10;
  std::string s = std::to_string(1ull << (power - 10 * decade));
  if (decade) s += kSuffix[decade];
  return s;
}

std::string bucket_label(int b) {
  if (b == 0) return "[0]";
  if (b == 1) return "[1]";
  return "[" + power_label(b - 1) + ", " + power_label(b) + ")";
}

void print_hist(FILE *o, const std::string &title, const std::vector<uint64_t> &counts) {
  fprintf(o, "%s:\n", title.c_str());
  int lo = -1, hi = -1;
  uint64_t max = 0;
  for (int b = 0; b < (int)counts.size(); b++)
    if (counts[b]) {
      if (lo < 0) lo = b;
      hi = b;
      max = std::max(max, counts[b]);
    }
  const int kWidth = 52;
  for (int b = lo; lo >= 0 && b <= hi; b++) {
    int bar = (int)((float)counts[b] / (float)max * kWidth);   // as bpftrace rounds
    fprintf(o, "%-16s%8" PRIu64 " |%-*s|\n", bucket_label(b).c_str(), counts[b], kWidth,
            std::string(bar, '@').c_str());
  }
  fprintf(o, "\n");
}

void collect(const Recording &r, const CallNode &n, std::map<std::string, std::vector<uint64_t>> &hists,
             uint64_t &unfinished) {
  if (n.closed) {
    std::vector<uint64_t> &h = hists[r.name_of(n.fn)];
    h.resize(65);
    h[bucket(n.duration())]++;
  } else {
    unfinished++;
  }
  for (const auto &ch : n.children) collect(r, *ch, hists, unfinished);
}

}  // namespace

int format_latency(const Context &c) {
  if (!has_call_events(c, "latency")) return 2;
  std::map<std::string, std::vector<uint64_t>> hists;
  uint64_t unfinished = 0;
  for (const auto &[tid, t] : call_trees(c.rec))
    for (const auto &root : t.roots) collect(c.rec, *root, hists, unfinished);
  fprintf(c.out, "# kjit latency: call durations in ns per function; %" PRIu64 " calls without a return left out;"
          " instructions per call are not recorded\n\n", unfinished);
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto &[name, h] : hists) {
    uint64_t n = 0;
    for (uint64_t x : h) n += x;
    order.push_back({n, name});
  }
  std::sort(order.begin(), order.end());
  for (const auto &[n, name] : order) print_hist(c.out, "@duration_ns[" + name + "]", hists[name]);
  return 0;
}

}  // namespace kjit::report
