// SPDX-License-Identifier: GPL-2.0
// annotate FUNC: the function's instructions (disassembled from the
// vmlinux with Zydis) with how many times each ran, like perf annotate.
// FUNC may be a glob; the last line is the sum of the counts, which equals
// the instructions the recorded blocks executed in those functions.
#include <fnmatch.h>

#include <cinttypes>

#include "annotation.h"
#include "formats.h"

namespace kjit::report {

int format_annotate(const Context &c, const std::string &func) {
  if (!c.dbg) {
    fprintf(stderr, "kjit-report: annotate needs --vmlinux, or a module's debug file (--debug-dir):"
                    " the instructions come from them\n");
    return 2;
  }
  if (c.rec.blocks.empty()) {
    fprintf(stderr, "kjit-report: annotate needs a bbcount recording (this one is %s)\n", c.rec.tool().c_str());
    return 2;
  }
  Coverage cov = make_coverage(c.rec);
  uint64_t total = 0, expected = 0;
  size_t nfunc = 0;
  for (const Symbol *s : cov.entered(c.rec)) {
    if (fnmatch(func.c_str(), s->name.c_str(), 0) && fnmatch(func.c_str(), s->full_name().c_str(), 0)) continue;
    nfunc++;
    std::vector<AnnotatedInsn> insns;
    if (!annotate_function(*s, cov, *c.dbg, insns)) {
      fprintf(stderr, "kjit-report: %s is not in the %s's text\n", s->full_name().c_str(),
              s->module.empty() ? "vmlinux" : "module's debug file");
      return 1;
    }
    fprintf(c.out, "%s (%u bytes):\n", s->full_name().c_str(), s->size);
    for (const AnnotatedInsn &i : insns) {
      total += i.count;
      std::string src = i.file.empty() ? "" : "  " + i.file + ":" + std::to_string(i.line);
      if (i.count) fprintf(c.out, "%12" PRIu64 "  %6x:  %-40s%s\n", i.count, i.offset, i.text.c_str(), src.c_str());
      else fprintf(c.out, "%12s  %6x:  %-40s%s\n", "", i.offset, i.text.c_str(), src.c_str());
    }
    expected += executed_in(c.rec, *s);
  }
  if (!nfunc) {
    fprintf(stderr, "kjit-report: no executed function matches %s\n", func.c_str());
    return 1;
  }
  fprintf(c.out, "total %" PRIu64 " instructions executed in %zu function%s (blocks: %" PRIu64 ")\n", total, nfunc,
          nfunc == 1 ? "" : "s", expected);
  if (total != expected)
    fprintf(stderr, "kjit-report: the vmlinux's bytes decode differently from the running text"
                    " (alternatives or static keys patched at boot): %" PRIu64 " != %" PRIu64 "\n", total, expected);
  return 0;
}

}  // namespace kjit::report
