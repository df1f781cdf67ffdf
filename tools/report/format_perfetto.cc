// SPDX-License-Identifier: GPL-2.0
// perfetto: the call graph of a callstack recording (call_tree.h) as
// Chrome trace-event JSON, the JSON Object Format that ui.perfetto.dev
// and chrome://tracing open: {"traceEvents": [...], "displayTimeUnit": "ns"}
// with one complete event ("ph": "X") per call, name the function, ts and
// dur in microseconds (CLOCK_MONOTONIC, three decimals: nanoseconds).
// EVENTS know threads only, so pid and tid are both the thread id (one
// track per thread).  A call is drawn inside its caller and after its
// previous sibling even when clocks of two CPUs disagree by a little: its
// bounds are clamped to theirs, so the events of a thread always nest.
#include <cinttypes>

#include "call_tree.h"
#include "formats.h"

namespace kjit::report {
namespace {

struct Writer {
  const Context &c;
  bool first = true;

  void time(const char *key, uint64_t ns) {
    fprintf(c.out, ", \"%s\": %" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
  }

  // The call in [lo, hi] (its caller's bounds); returns where it ended.
  uint64_t call(const CallNode &n, uint32_t tid, uint64_t lo, uint64_t hi) {
    uint64_t start = std::min(std::max(n.start, lo), hi);
    uint64_t end = std::min(std::max(n.end, start), hi);
    fprintf(c.out, "%s\n  {\"name\": %s, \"cat\": \"kjit\", \"ph\": \"X\"", first ? "" : ",",
            json_string(c.rec.name_of(n.fn)).c_str());
    first = false;
    time("ts", start);
    time("dur", end - start);
    fprintf(c.out, ", \"pid\": %u, \"tid\": %u, \"args\": {\"cpu\": %u, \"finished\": %s, \"self_ns\": %" PRIu64 "}}",
            tid, tid, n.cpu, n.closed ? "true" : "false", n.self_time());
    uint64_t cursor = start;
    for (const auto &ch : n.children) cursor = call(*ch, tid, cursor, end);
    return end;
  }
};

}  // namespace

int format_perfetto(const Context &c) {
  if (!has_call_events(c, "perfetto")) return 2;
  FILE *o = c.out;
  auto meta = [&](const char *k) { auto it = c.rec.meta.find(k); return it == c.rec.meta.end() ? "" : it->second; };
  fprintf(o, "{\"displayTimeUnit\": \"ns\",\n \"otherData\": {\"producer\": \"kjit-report\", \"kernel_release\": %s,"
          " \"command\": %s},\n \"traceEvents\": [", json_string(meta("kernel_release")).c_str(),
          json_string(meta("command")).c_str());
  Writer w{c};
  for (const auto &[tid, t] : call_trees(c.rec)) {
    uint64_t cursor = 0;
    for (const auto &root : t.roots) cursor = w.call(*root, tid, cursor, UINT64_MAX);
  }
  fprintf(o, "\n ]\n}\n");
  return 0;
}

}  // namespace kjit::report
