// SPDX-License-Identifier: GPL-2.0
// graph and folded, from callstack events (call_tree.h); perfetto and
// latency (format_perfetto.cc, format_latency.cc) read the same trees.
//   graph:  ftrace's function_graph layout, " CPU) duration | func() {"
//   folded: "a;b;c weight" lines for flamegraph.pl, weighted by calls or by
//           self time in ns (--weight)
#include <cinttypes>

#include "call_tree.h"
#include "formats.h"

namespace kjit::report {
namespace {

void print_duration(FILE *o, uint64_t ns, bool closed) {
  if (!closed) { fprintf(o, "%-13s", "  (unfinished)"); return; }
  double us = (double)ns / 1000.0;
  char mark = us > 100 ? '!' : us > 10 ? '+' : ' ';
  fprintf(o, "%c %8.3f us  ", mark, us);
}

void graph_node(const Context &c, const CallNode &n, int depth) {
  FILE *o = c.out;
  std::string name = c.rec.name_of(n.fn);
  if (n.children.empty()) {
    fprintf(o, " %u) ", n.cpu);
    print_duration(o, n.end - n.start, n.closed);
    fprintf(o, "|  %*s%s();\n", 2 * depth, "", name.c_str());
    return;
  }
  fprintf(o, " %u) %13s|  %*s%s() {\n", n.cpu, "", 2 * depth, "", name.c_str());
  for (const auto &ch : n.children) graph_node(c, *ch, depth + 1);
  fprintf(o, " %u) ", n.cpu);
  print_duration(o, n.end - n.start, n.closed);
  fprintf(o, "|  %*s}\n", 2 * depth, "");
}


}  // namespace

bool has_call_events(const Context &c, const char *format) {
  if (c.rec.tool() == "callstack") return true;
  fprintf(stderr, "kjit-report: --format %s: graph, folded, perfetto and latency need a callstack recording"
                  " (kjitctl record -t callstack); this one is %s\n", format, c.rec.tool().c_str());
  return false;
}

int format_graph(const Context &c) {
  if (!has_call_events(c, "graph")) return 2;
  auto threads = call_trees(c.rec);
  fprintf(c.out, "# tracer: kjit function_graph\n#\n# CPU  DURATION                  FUNCTION CALLS\n# |     |   |                     |   |   |   |\n");
  for (const auto &[pid, t] : threads) {
    fprintf(c.out, " ------------------------------------------\n  thread %u\n ------------------------------------------\n", pid);
    for (const auto &r : t.roots) graph_node(c, *r, 0);
  }
  return 0;
}

int format_folded(const Context &c) {
  if (!has_call_events(c, "folded")) return 2;
  if (c.weight != "calls" && c.weight != "time") {
    fprintf(stderr, "kjit-report: --weight is calls or time\n");
    return 2;
  }
  for (const auto &[k, v] : folded_stacks(c.rec, c.weight == "time")) fprintf(c.out, "%s %" PRIu64 "\n", k.c_str(), v);
  return 0;
}

}  // namespace kjit::report
