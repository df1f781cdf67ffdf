// SPDX-License-Identifier: GPL-2.0
// lcov: a tracefile (geninfo(1) format) with function and line coverage as
// gcov would give it for every compilation unit with an entered function
// (coverage.h line_coverage): all its functions and lines with code, 0
// when they did not run, so genhtml's percentages are over whole files.
// Comment lines at the top ('#', skipped by lcov and genhtml) say which
// files are complete and which (headers) hold only some of their lines.
// A -t branches recording adds branch coverage: per conditional branch of
// an entered function (only those: not yet whole files), BRDA with branch 0
// its taken edge and 1 its fall-through, block the branch's index among its
// line's branches, "-" for a branch whose block never ran.
#include <map>

#include "branch_sites.h"
#include "formats.h"

namespace kjit::report {
namespace {

struct LineBranch {
  uint64_t taken, not_taken;
  bool reached;
};
// file -> line -> its branches in address order
using BranchLines = std::map<std::string, std::map<int, std::vector<LineBranch>>>;

BranchLines branch_lines(const Context &c, const Coverage &cov) {
  BranchLines out;
  if (c.rec.tool() != "branches") return out;
  for (const BranchSite &b : branch_sites(c.rec, cov, c.dbg)) {
    LineRow row;
    if (!c.dbg->line_at(b.addr, row)) continue;
    bool reached = b.counted || cov.count_at(b.addr) != 0;
    // Reached but not counted (the table was full): nothing to claim.
    if (!b.counted && reached) continue;
    out[row.file][row.line].push_back({b.taken, b.not_taken, reached});
  }
  return out;
}

void print_branches(FILE *o, const std::map<int, std::vector<LineBranch>> &lines) {
  size_t found = 0, hit = 0;
  for (const auto &[line, branches] : lines)
    for (size_t i = 0; i < branches.size(); i++) {
      const LineBranch &b = branches[i];
      uint64_t edge[2] = {b.taken, b.not_taken};
      for (int e = 0; e < 2; e++) {
        if (b.reached) fprintf(o, "BRDA:%d,%zu,%d,%llu\n", line, i, e, (unsigned long long)edge[e]);
        else fprintf(o, "BRDA:%d,%zu,%d,-\n", line, i, e);
        found++;
        hit += b.reached && edge[e] ? 1 : 0;
      }
    }
  if (found) fprintf(o, "BRF:%zu\nBRH:%zu\n", found, hit);
}

}  // namespace

int format_lcov(const Context &c) {
  if (!c.dbg || !c.dbg->has_lines()) {
    fprintf(stderr, "kjit-report: lcov needs --vmlinux with DWARF (the -dbg package's vmlinux),"
                    " or modules' debug files (--debug-dir)\n");
    return 2;
  }
  if (c.rec.blocks.empty()) {
    fprintf(stderr, "kjit-report: lcov needs a bbcount recording (this one is %s)\n", c.rec.tool().c_str());
    return 2;
  }
  Coverage cov = make_coverage(c.rec);
  BranchLines branches = branch_lines(c, cov);
  std::map<std::string, FileLines> files = line_coverage(c.rec, cov, *c.dbg);
  fprintf(c.out, "# kjit-report lcov: every function and line with code of a complete file (0: not run);\n"
                 "# a partial file (a header) has only the lines compiled into the units of entered functions\n");
  for (bool complete : {true, false}) {
    fprintf(c.out, "# %s:", complete ? "complete" : "partial");
    for (const auto &[file, fl] : files)
      if (fl.complete == complete) fprintf(c.out, " %s", file.c_str());
    fprintf(c.out, "\n");
  }
  fprintf(c.out, "TN:kjit\n");
  for (const auto &[file, fl] : files) {
    fprintf(c.out, "SF:%s%s\n", c.source_root.c_str(), file.c_str());
    size_t fnh = 0;
    for (const auto &[name, e] : fl.functions) fprintf(c.out, "FN:%d,%s\n", e.first, name.c_str());
    for (const auto &[name, e] : fl.functions) {
      fprintf(c.out, "FNDA:%llu,%s\n", (unsigned long long)e.second, name.c_str());
      fnh += e.second ? 1 : 0;
    }
    fprintf(c.out, "FNF:%zu\nFNH:%zu\n", fl.functions.size(), fnh);
    if (auto it = branches.find(file); it != branches.end()) print_branches(c.out, it->second);
    size_t lh = 0;
    for (const auto &[line, n] : fl.lines) {
      fprintf(c.out, "DA:%d,%llu\n", line, (unsigned long long)n);
      lh += n ? 1 : 0;
    }
    fprintf(c.out, "LF:%zu\nLH:%zu\nend_of_record\n", fl.lines.size(), lh);
  }
  return 0;
}

}  // namespace kjit::report
