// SPDX-License-Identifier: GPL-2.0
// json: the recording in one documented schema (docs/data-format.md,
// "JSON"), schema_version 3 (json_escape.h): meta, stats, blocks, calls, events, and what
// the other formats show: branches, graph and folded (callstack), lines and
// annotate (with a vmlinux).
#include <cinttypes>
#include <set>

#include "annotation.h"
#include "branch_sites.h"
#include "call_tree.h"
#include "formats.h"
#include "json_escape.h"

namespace kjit::report {

// kjitctl's escaper (tools/common/json_escape.c): one for every JSON kjit prints.
std::string json_string(const std::string &s) {
  std::string o(json_format_string(nullptr, 0, s.data(), s.size()) + 1, '\0');
  o.resize(json_format_string(o.data(), o.size(), s.data(), s.size()));
  return o;
}

namespace {

void kv_object(FILE *o, const std::map<std::string, std::string> &m) {
  fprintf(o, "{");
  bool first = true;
  for (const auto &[k, v] : m) {
    fprintf(o, "%s%s: %s", first ? "" : ", ", json_string(k).c_str(), json_string(v).c_str());
    first = false;
  }
  fprintf(o, "}");
}


// "branches": the branch sites (branch_sites.h) in address order.
void print_branches(const Context &c, FILE *o) {
  fprintf(o, ",\n \"branches\": [");
  bool first = true;
  for (const BranchSite &b : branch_sites(c.rec, make_coverage(c.rec), c.dbg)) {
    fprintf(o, "%s\n  {\"addr\": \"0x%" PRIx64 "\", \"branch\": %s, \"target\": %s, \"taken\": %" PRIu64
            ", \"not_taken\": %" PRIu64 ", \"counted\": %s, \"layout_predicts\": \"%s\"",
            first ? "" : ",", b.addr, json_string(c.rec.name_of(b.addr)).c_str(),
            json_string(c.rec.name_of(b.target)).c_str(), b.taken, b.not_taken, b.counted ? "true" : "false",
            b.predicted_taken() ? "taken" : "not_taken");
    LineRow row;
    if (c.dbg && c.dbg->line_at(b.addr, row))
      fprintf(o, ", \"file\": %s, \"line\": %d, \"inline_function\": %s", json_string(row.file).c_str(), row.line,
              json_string(c.dbg->function_at(b.addr)).c_str());
    fprintf(o, "}");
    first = false;
  }
  fprintf(o, "\n ]");
}

void print_call(const Recording &r, const CallNode &n, FILE *o) {
  fprintf(o, "{\"function\": %s, \"cpu\": %u, \"start_ns\": %" PRIu64 ", \"duration_ns\": %" PRIu64
          ", \"self_ns\": %" PRIu64 ", \"finished\": %s, \"calls\": [",
          json_string(r.name_of(n.fn)).c_str(), n.cpu, n.start, n.duration(), n.self_time(),
          n.closed ? "true" : "false");
  for (size_t i = 0; i < n.children.size(); i++) {
    if (i) fprintf(o, ", ");
    print_call(r, *n.children[i], o);
  }
  fprintf(o, "]}");
}

// "graph": per thread its call trees; "folded": stacks by calls and by
// self time (ns).
void print_calls(const Context &c, FILE *o) {
  fprintf(o, ",\n \"graph\": [");
  bool first = true;
  for (const auto &[pid, t] : call_trees(c.rec)) {
    fprintf(o, "%s\n  {\"pid\": %u, \"calls\": [", first ? "" : ",", pid);
    for (size_t i = 0; i < t.roots.size(); i++) {
      fprintf(o, "%s\n   ", i ? "," : "");
      print_call(c.rec, *t.roots[i], o);
    }
    fprintf(o, "]}");
    first = false;
  }
  fprintf(o, "\n ],\n \"folded\": {");
  const char *const weights[] = {"calls", "time_ns"};
  for (int w = 0; w < 2; w++) {
    fprintf(o, "%s\n  \"%s\": {", w ? "," : "", weights[w]);
    bool f2 = true;
    for (const auto &[stack, n] : folded_stacks(c.rec, w == 1)) {
      fprintf(o, "%s%s: %" PRIu64, f2 ? "" : ", ", json_string(stack).c_str(), n);
      f2 = false;
    }
    fprintf(o, "}");
  }
  fprintf(o, "\n }");
}

// "annotate": every entered function's instructions with their counts.
void print_annotate(const Context &c, const Coverage &cov, FILE *o) {
  fprintf(o, ",\n \"annotate\": [");
  bool first = true;
  for (const Symbol *s : cov.entered(c.rec)) {
    std::vector<AnnotatedInsn> insns;
    if (!annotate_function(*s, cov, *c.dbg, insns)) continue;
    fprintf(o, "%s\n  {\"function\": %s, \"size\": %u, \"executed\": %" PRIu64 ", \"insns\": [",
            first ? "" : ",", json_string(s->full_name()).c_str(), s->size, executed_in(c.rec, *s));
    for (size_t i = 0; i < insns.size(); i++) {
      const AnnotatedInsn &a = insns[i];
      fprintf(o, "%s\n   {\"offset\": %u, \"text\": %s, \"count\": %" PRIu64, i ? "," : "", a.offset,
              json_string(a.text).c_str(), a.count);
      if (!a.file.empty()) fprintf(o, ", \"file\": %s, \"line\": %d", json_string(a.file).c_str(), a.line);
      fprintf(o, "}");
    }
    fprintf(o, "]}");
    first = false;
  }
  fprintf(o, "\n ]");
}

}  // namespace

int format_json(const Context &c) {
  FILE *o = c.out;
  fprintf(o, "{\"schema_version\": %d, \"document\": \"report\",\n \"meta\": ", KJIT_JSON_SCHEMA_VERSION);
  kv_object(o, c.rec.meta);
  fprintf(o, ",\n \"stats\": ");
  kv_object(o, c.rec.stats);
  fprintf(o, ",\n \"blocks\": [");
  bool first = true;
  for (const auto &b : c.rec.blocks) {
    const Symbol *s = c.rec.symbol_at(b.addr);
    fprintf(o, "%s\n  {\"addr\": \"0x%" PRIx64 "\", ", first ? "" : ",", b.addr);
    if (const Module *m = c.rec.module_at(b.addr))
      fprintf(o, "\"module\": %s, \"module_offset\": %" PRIu64, json_string(m->name).c_str(), b.addr - m->base);
    else
      fprintf(o, "\"stext_offset\": %" PRIu64, b.addr - c.rec.stext);
    fprintf(o, ", \"function\": %s, \"offset\": %" PRIu64 ", \"len\": %u, \"insns\": %u, \"count\": %" PRIu64
            ", \"cut\": %s", json_string(s ? s->full_name() : "").c_str(),
            s ? b.addr - s->addr : 0, b.len, b.ninsn, b.count, b.flags & KJIT_DATA_BLOCK_FRAGMENT ? "true" : "false");
    LineRow row;
    if (c.dbg && c.dbg->line_at(b.addr, row))
      fprintf(o, ", \"file\": %s, \"line\": %d", json_string(row.file).c_str(), row.line);
    fprintf(o, "}");
    first = false;
  }
  fprintf(o, "\n ],\n \"calls\": [");
  first = true;
  for (const auto &x : c.rec.calls) {
    fprintf(o, "%s\n  {\"function\": %s, \"count\": %" PRIu64 "}", first ? "" : ",",
            json_string(c.rec.name_of(x.addr)).c_str(), x.count);
    first = false;
  }
  fprintf(o, "\n ],\n \"events\": [");
  static const char *const kType[] = {"", "entry", "call", "return"};
  first = true;
  for (const auto &e : c.rec.events) {
    fprintf(o, "%s\n  {\"type\": \"%s\", \"function\": %s, \"sp\": \"0x%" PRIx64 "\", \"ns\": %" PRIu64
            ", \"pid\": %u, \"cpu\": %u}", first ? "" : ",", kType[e.type], json_string(c.rec.name_of(e.pc)).c_str(),
            e.sp, e.ns, e.pid, e.cpu);
    first = false;
  }
  fprintf(o, "\n ],\n \"modules\": [");
  first = true;
  std::set<std::string> with_code;   // only those are looked for: opening a .ko costs
  for (const Symbol &s : c.rec.symbols) with_code.insert(s.module);
  for (const Module &m : c.rec.modules) {
    fprintf(o, "%s\n  {\"name\": %s, \"base\": \"0x%" PRIx64 "\", \"size\": %" PRIu64 ", \"build_id\": %s",
            first ? "" : ",", json_string(m.name).c_str(), m.base, m.size, json_string(m.build_id).c_str());
    if (c.dbg && with_code.count(m.name) && !c.dbg->module_path(m).empty())
      fprintf(o, ", \"debug_file\": %s", json_string(c.dbg->module_path(m)).c_str());
    fprintf(o, "}");
    first = false;
  }
  fprintf(o, "\n ]");
  if (c.rec.tool() == "branches") print_branches(c, o);
  if (c.rec.tool() == "callstack") print_calls(c, o);
  if (c.dbg && !c.rec.blocks.empty()) print_annotate(c, make_coverage(c.rec), o);
  if (c.dbg && c.dbg->has_lines() && !c.rec.blocks.empty()) {
    fprintf(o, ",\n \"lines\": {");
    Coverage cov = make_coverage(c.rec);
    first = true;
    for (const auto &[file, fl] : line_coverage(c.rec, cov, *c.dbg)) {
      fprintf(o, "%s\n  %s: {", first ? "" : ",", json_string(file).c_str());
      bool f2 = true;
      for (const auto &[line, n] : fl.lines) {
        fprintf(o, "%s\"%d\": %" PRIu64, f2 ? "" : ", ", line, n);
        f2 = false;
      }
      fprintf(o, "}");
      first = false;
    }
    fprintf(o, "\n }");
  }
  fprintf(o, "\n}\n");
  return 0;
}

}  // namespace kjit::report
