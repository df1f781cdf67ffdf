/* SPDX-License-Identifier: GPL-2.0 */
// The output formats of kjit-report, one function each (one file each).
#pragma once
#include <cstdio>
#include <string>

#include "coverage.h"
#include "data_file.h"
#include "debug_images.h"

namespace kjit::report {

struct Context {
  const Recording &rec;
  const DebugImages *dbg;    // nullptr without --vmlinux or --debug-dir
  std::string source_root;   // prefix for lcov SF: paths ("" = relative)
  std::string weight;        // folded: "time" or "calls"
  FILE *out;
};

int format_text(const Context &c);
int format_lcov(const Context &c);
int format_drcov(const Context &c);
int format_json(const Context &c);
int format_annotate(const Context &c, const std::string &func);
int format_graph(const Context &c);
int format_folded(const Context &c);
int format_branches(const Context &c);
int format_perfetto(const Context &c);
int format_latency(const Context &c);

// Whether the recording holds callstack events (graph, folded, perfetto,
// latency need them); says so on stderr when it does not.
bool has_call_events(const Context &c, const char *format);

// JSON string literal (RFC 8259): the one escaper of kjit-report's JSON
// (control characters as \u00XX, invalid UTF-8 as U+FFFD).
std::string json_string(const std::string &s);

}  // namespace kjit::report
