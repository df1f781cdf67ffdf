// graph and folded, from callstack events.  Per thread a stack of frames
// (function, rsp of its call, start time) is rebuilt as kjitctl's live view
// does: a frame is over when its thread calls or enters at an rsp >= its
// own, or returns with rsp >= call rsp - 8.
//   graph:  ftrace's function_graph layout, " CPU) duration | func() {"
//   folded: "a;b;c weight" lines for flamegraph.pl, weighted by calls or by
//           self time in ns (--weight)
#include <algorithm>
#include <cinttypes>
#include <map>
#include <memory>

#include "formats.h"

namespace kjit::report {
namespace {

struct Node {
  uint64_t fn = 0, sp = 0, start = 0, end = 0;
  uint16_t cpu = 0;
  bool closed = false;
  std::vector<std::unique_ptr<Node>> children;
};

struct Thread {
  std::vector<std::unique_ptr<Node>> roots;
  std::vector<Node *> stack;
  uint64_t last = 0;
};

std::map<uint32_t, Thread> build(const Recording &r) {
  std::map<uint32_t, Thread> threads;
  for (const auto &e : r.events) {
    Thread &t = threads[e.pid];
    t.last = std::max(t.last, e.ns);
    auto close_top = [&](uint64_t ns) {
      Node *n = t.stack.back();
      n->end = std::max(ns, n->start);
      n->closed = true;
      t.stack.pop_back();
    };
    if (e.type == KJIT_DATA_EV_ENTRY || e.type == KJIT_DATA_EV_CALL) {
      while (!t.stack.empty() && t.stack.back()->sp <= e.sp) close_top(e.ns);
      if (e.type == KJIT_DATA_EV_CALL && t.stack.empty()) continue;  // outside any entry
      auto n = std::make_unique<Node>();
      n->fn = e.pc; n->sp = e.sp; n->start = e.ns; n->cpu = e.cpu;
      Node *raw = n.get();
      (t.stack.empty() ? t.roots : t.stack.back()->children).push_back(std::move(n));
      t.stack.push_back(raw);
    } else {
      while (!t.stack.empty() && t.stack.back()->sp <= e.sp + 8) {
        bool mine = t.stack.back()->sp == e.sp + 8;
        close_top(e.ns);
        if (mine) break;
      }
    }
  }
  for (auto &[pid, t] : threads)
    for (Node *n : t.stack) n->end = std::max(t.last, n->start);   // unfinished
  return threads;
}

void print_duration(FILE *o, uint64_t ns, bool closed) {
  if (!closed) { fprintf(o, "%-13s", "  (unfinished)"); return; }
  double us = (double)ns / 1000.0;
  char mark = us > 100 ? '!' : us > 10 ? '+' : ' ';
  fprintf(o, "%c %8.3f us  ", mark, us);
}

void graph_node(const Context &c, const Node &n, int depth) {
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

void fold_node(const Context &c, const Node &n, const std::string &prefix,
               std::map<std::string, uint64_t> &out, bool by_time) {
  std::string key = prefix.empty() ? c.rec.name_of(n.fn) : prefix + ";" + c.rec.name_of(n.fn);
  uint64_t child_time = 0;
  for (const auto &ch : n.children) {
    child_time += ch->end - ch->start;
    fold_node(c, *ch, key, out, by_time);
  }
  uint64_t total = n.end - n.start;
  out[key] += by_time ? (total > child_time ? total - child_time : 0) : 1;
}

bool need_events(const Context &c) {
  if (c.rec.tool() != "callstack") {
    fprintf(stderr, "kjit-report: graph and folded need a callstack recording (kjitctl record -t callstack);"
                    " this one is %s\n", c.rec.tool().c_str());
    return false;
  }
  return true;
}

}  // namespace

int format_graph(const Context &c) {
  if (!need_events(c)) return 2;
  auto threads = build(c.rec);
  fprintf(c.out, "# tracer: kjit function_graph\n#\n# CPU  DURATION                  FUNCTION CALLS\n# |     |   |                     |   |   |   |\n");
  for (const auto &[pid, t] : threads) {
    fprintf(c.out, " ------------------------------------------\n  thread %u\n ------------------------------------------\n", pid);
    for (const auto &r : t.roots) graph_node(c, *r, 0);
  }
  return 0;
}

int format_folded(const Context &c) {
  if (!need_events(c)) return 2;
  if (c.weight != "calls" && c.weight != "time") {
    fprintf(stderr, "kjit-report: --weight is calls or time\n");
    return 2;
  }
  std::map<std::string, uint64_t> out;
  for (const auto &[pid, t] : build(c.rec))
    for (const auto &r : t.roots) fold_node(c, *r, "", out, c.weight == "time");
  for (const auto &[k, v] : out) fprintf(c.out, "%s %" PRIu64 "\n", k.c_str(), v);
  return 0;
}

}  // namespace kjit::report
