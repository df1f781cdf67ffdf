// SPDX-License-Identifier: GPL-2.0
// latency: per function, a histogram of its call durations (ns) and one of
// its instructions per call, in bpftrace's hist() layout:
// "@duration_ns[func]:" / "@insns[func]:", then power-of-two buckets
// "[4, 8)   12 |@@@@@   |" from the lowest to the highest bucket that
// holds a call, functions with fewer calls first (as bpftrace prints a
// map).  Both come from a callstack recording's call trees (call_tree.h);
// calls whose return was not seen are left out and counted on the first
// line.  Instructions are those run in translated code between the call
// and its own return on one CPU (data_format.h): a call whose thread was
// switched out meanwhile has no honest count, so it is counted as not
// measured, never estimated.  Version 1 recordings have no counts.
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

using Hists = std::map<std::string, std::vector<uint64_t>>;

struct Tally {
  Hists durations, insns;
  uint64_t unfinished = 0, unmeasured = 0;
};

void collect(const Recording &r, const CallNode &n, Tally &t) {
  if (n.closed) {
    std::vector<uint64_t> &h = t.durations[r.name_of(n.fn)];
    h.resize(65);
    h[bucket(n.duration())]++;
    if (n.insns_measured) {
      std::vector<uint64_t> &hi = t.insns[r.name_of(n.fn)];
      hi.resize(65);
      hi[bucket(n.insns)]++;
    } else {
      t.unmeasured++;
    }
  } else {
    t.unfinished++;
  }
  for (const auto &ch : n.children) collect(r, *ch, t);
}

// Every map in bpftrace's order: functions with fewer calls first.
void print_map(FILE *o, const char *map, Hists &hists) {
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto &[name, h] : hists) {
    uint64_t n = 0;
    for (uint64_t x : h) n += x;
    order.push_back({n, name});
  }
  std::sort(order.begin(), order.end());
  for (const auto &[n, name] : order) print_hist(o, std::string(map) + "[" + name + "]", hists[name]);
}

}  // namespace

int format_latency(const Context &c) {
  if (!has_call_events(c, "latency")) return 2;
  Tally t;
  for (const auto &[tid, th] : call_trees(c.rec))
    for (const auto &root : th.roots) collect(c.rec, *root, t);
  bool counted = std::any_of(c.rec.events.begin(), c.rec.events.end(),
                             [](const kjit_data_event &e) { return e.flags & KJIT_DATA_EV_INSNS; });
  fprintf(c.out, "# kjit latency: call durations in ns per function; %" PRIu64 " calls without a return left out;",
          t.unfinished);
  if (counted)
    fprintf(c.out, " instructions per call (run in translated code): %" PRIu64
            " calls not measured (thread switched out mid-call, or returned through code not translated)\n\n",
            t.unmeasured);
  else if (c.rec.version < 2)
    fprintf(c.out, " instructions per call are absent (data format version %u has no instruction counts)\n\n",
            c.rec.version);
  else
    fprintf(c.out, " instructions per call are absent (the module counted none: no per-CPU data window)\n\n");
  print_map(c.out, "@duration_ns", t.durations);
  if (counted) print_map(c.out, "@insns", t.insns);
  return 0;
}

}  // namespace kjit::report
