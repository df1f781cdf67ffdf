// SPDX-License-Identifier: GPL-2.0
// kjit-sim run CAPTURE: differential run, plus an optional tool whose result
// is printed next to the reference runner's count of the same thing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "capture_file.h"
#include "cli.h"
#include "commands.h"
#include "diff_runner.h"
#include "sim_symbols.h"
#include "tool_registry.h"

namespace kjit::sim {

int cmd_run(int argc, char **argv) {
  std::string path, tool_name, sym_path;
  DiffOptions opt;
  enum { kTool = 1, kSymbols, kBudget, kNoInline, kNoLiveness, kChain, kCodeBytes, kQuiet };
  static const option kOptions[] = {
      {"tool", required_argument, nullptr, kTool},         {"symbols", required_argument, nullptr, kSymbols},
      {"budget", required_argument, nullptr, kBudget},     {"no-inline", no_argument, nullptr, kNoInline},
      {"no-liveness", no_argument, nullptr, kNoLiveness},  {"chain", required_argument, nullptr, kChain},
      {"code-bytes", required_argument, nullptr, kCodeBytes}, {"quiet", no_argument, nullptr, kQuiet},
      {nullptr, 0, nullptr, 0}};
  uint64_t n = 0;
  for (int o, first = 1; (o = cli_next(argc, argv, "", kOptions, first)) != -1; first = 0) {
    switch (o) {
      case kTool: tool_name = optarg; break;
      case kSymbols: sym_path = optarg; break;
      case kBudget:
        if (!cli_number("run", "--budget", optarg, UINT64_MAX, &n)) return 2;
        opt.reference.budget = opt.translated.budget = n;
        break;
      case kNoInline: opt.translated.engine.inline_instrumentation = 0; break;
      case kNoLiveness: opt.translated.engine.use_liveness = 0; break;
      case kChain:
        if (!cli_number("run", "--chain", optarg, UINT32_MAX, &n)) return 2;
        opt.translated.engine.max_chain_length = static_cast<uint32_t>(n);
        break;
      case kCodeBytes:
        if (!cli_number("run", "--code-bytes", optarg, UINT64_MAX, &n)) return 2;
        opt.translated.code_size = n;
        break;
      case kQuiet: opt.translated.quiet = true; break;
      default: return 2;  // getopt said what
    }
  }
  if (!cli_one_operand("run", "CAPTURE", argc, argv, &path)) return 2;
  Capture cap;
  std::string err = load_capture_file(path, &cap);
  SymbolTable syms;
  if (err.empty() && !sym_path.empty()) err = syms.load_kallsyms(sym_path);
  if (!err.empty()) {
    fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  if (!syms.empty()) opt.translated.symbols = &syms;

  const Tool *tool = nullptr;
  std::string tool_result;
  if (!tool_name.empty()) {
    tool = find_tool(tool_name);
    if (!tool) {
      fprintf(stderr, "error: unknown tool %s; known:", tool_name.c_str());
      for (const Tool &t : tools()) fprintf(stderr, " %s", t.name.c_str());
      fprintf(stderr, "\n");
      return 2;
    }
    opt.translated.plugin_init = tool->init;
    opt.translated.plugin = tool->plugin();
    opt.after_translated = [&](TranslatedRunner &) { tool_result = tool->report(); };
  }

  const DiffResult d = run_diff(cap, opt);
  printf("%s", describe_diff(d).c_str());
  if (!d.error.empty()) return 2;
  const ReferenceCounts &c = d.reference.counts;
  printf("reference: %llu insns, %llu blocks, %zu calls, %s, %s\n",
         static_cast<unsigned long long>(c.instructions), static_cast<unsigned long long>(c.blocks),
         c.call_trace.size(), format_branch_hints(c).c_str(), format_lock_contention(c).c_str());
  if (tool) {
    const std::string ref = tool->reference(c);
    printf("tool %s: %s\nreference: %s\n%s\n", tool->name.c_str(), tool_result.c_str(), ref.c_str(),
           tool_result == ref ? "tool AGREES with the reference" : "tool DISAGREES with the reference");
  }
  if (d.translated.lock_errors)
    printf("warning: %llu engine lock errors\n", static_cast<unsigned long long>(d.translated.lock_errors));
  return d.equal && (!tool || tool_result == tool->reference(c)) ? 0 : 1;
}

}  // namespace kjit::sim
