// lcov: a tracefile (geninfo(1) format) with function and line coverage of
// every function that was entered; its lines that did not run are 0, so
// genhtml shows what the workload missed.
#include "formats.h"

namespace kjit::report {

int format_lcov(const Context &c) {
  if (!c.dbg || !c.dbg->has_lines()) {
    fprintf(stderr, "kjit-report: lcov needs --vmlinux with DWARF (the -dbg package's vmlinux)\n");
    return 2;
  }
  if (c.rec.blocks.empty()) {
    fprintf(stderr, "kjit-report: lcov needs a bbcount recording (this one is %s)\n", c.rec.tool().c_str());
    return 2;
  }
  Coverage cov = make_coverage(c.rec, c.slide);
  fprintf(c.out, "TN:kjit\n");
  for (const auto &[file, fl] : line_coverage(c.rec, cov, *c.dbg)) {
    fprintf(c.out, "SF:%s%s\n", c.source_root.c_str(), file.c_str());
    size_t fnh = 0;
    for (const auto &[name, e] : fl.functions) fprintf(c.out, "FN:%d,%s\n", e.first, name.c_str());
    for (const auto &[name, e] : fl.functions) {
      fprintf(c.out, "FNDA:%llu,%s\n", (unsigned long long)e.second, name.c_str());
      fnh += e.second ? 1 : 0;
    }
    fprintf(c.out, "FNF:%zu\nFNH:%zu\n", fl.functions.size(), fnh);
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
