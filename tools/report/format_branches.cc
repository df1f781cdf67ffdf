// SPDX-License-Identifier: GPL-2.0
// branches: per conditional branch, how often the code layout's prediction
// (forward not taken, backward taken: what likely()/unlikely() produce)
// was right, in the columns of the kernel's branch_annotated statistics
// (kernel/trace/trace_branch.c, CONFIG_PROFILE_ANNOTATED_BRANCHES), worst
// predicted first as there; then, per row, the branch and its taken and
// not-taken counts.  With a vmlinux, the entered functions' branches that
// never ran are listed too ("X" as the kernel shows a branch never hit).
#include <algorithm>
#include <cinttypes>

#include "branch_sites.h"
#include "formats.h"

namespace kjit::report {
namespace {

// trace_branch.c's get_incorrect_percent: -1 when never executed.
long incorrect_percent(const BranchSite &b) {
  if (b.correct()) return static_cast<long>(b.incorrect() * 100 / (b.correct() + b.incorrect()));
  return b.incorrect() ? 100 : -1;
}

std::string base_name(const std::string &f) {
  size_t slash = f.rfind('/');
  return slash == std::string::npos ? f : f.substr(slash + 1);
}

}  // namespace

int format_branches(const Context &c) {
  if (c.rec.tool() != "branches") {
    fprintf(stderr, "kjit-report: the branches format needs a recording made with -t branches (this one is %s)\n",
            c.rec.tool().c_str());
    return 2;
  }
  Coverage cov = make_coverage(c.rec);
  std::vector<BranchSite> sites = branch_sites(c.rec, cov, c.dbg);
  // trace_branch.c's annotated_branch_stat_cmp, worst first.
  std::stable_sort(sites.begin(), sites.end(), [](const BranchSite &a, const BranchSite &b) {
    long pa = incorrect_percent(a), pb = incorrect_percent(b);
    if (pa != pb) return pa > pb;
    if (a.incorrect() != b.incorrect()) return a.incorrect() > b.incorrect();
    return a.correct() < b.correct();
  });
  fprintf(c.out, " correct incorrect  %%        Function                  File              Line"
                 "   Branch                                        Taken   Not taken  Layout\n"
                 " ------- ---------  -        --------                  ----              ----"
                 "   ------                                        -----   ---------  ------\n");
  size_t reached = 0, both = 0;
  for (const BranchSite &b : sites) {
    std::string func, file = "?";
    int line = 0;
    LineRow row;
    if (c.dbg && c.dbg->line_at(b.addr, row)) {
      file = base_name(row.file);
      line = row.line;
      func = c.dbg->function_at(b.addr);
    }
    if (func.empty()) func = b.function ? b.function->name : "?";
    long pct = incorrect_percent(b);
    fprintf(c.out, "%8" PRIu64 " %8" PRIu64 " ", b.correct(), b.incorrect());
    if (pct < 0) fprintf(c.out, "  X ");
    else fprintf(c.out, "%3ld ", pct);
    fprintf(c.out, "%-30.30s %-20.20s %-6d %-40s %10" PRIu64 "  %10" PRIu64 "  %s\n", func.c_str(), file.c_str(),
            line, c.rec.name_of(b.addr).c_str(), b.taken, b.not_taken,
            b.predicted_taken() ? "taken" : "not taken");
    reached += b.taken + b.not_taken ? 1 : 0;
    both += b.taken && b.not_taken ? 1 : 0;
  }
  auto stat = c.rec.stats.find("scalar3");
  fprintf(c.out, "%zu conditional branches%s: %zu executed (%zu both ways), %zu never; dropped %s\n", sites.size(),
          c.dbg ? " in the entered functions" : " counted", reached, both, sites.size() - reached,
          stat == c.rec.stats.end() ? "?" : stat->second.c_str());
  return 0;
}

}  // namespace kjit::report
