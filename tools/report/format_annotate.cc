// annotate FUNC: the function's instructions (disassembled from the
// vmlinux with Zydis) with how many times each ran, like perf annotate.
// FUNC may be a glob; the last line is the sum of the counts, which equals
// the instructions the recorded blocks executed in those functions.
#include <Zydis/Zydis.h>
#include <fnmatch.h>

#include <cinttypes>

#include "formats.h"

namespace kjit::report {

int format_annotate(const Context &c, const std::string &func) {
  if (!c.dbg) {
    fprintf(stderr, "kjit-report: annotate needs --vmlinux (the instructions come from it)\n");
    return 2;
  }
  if (c.rec.blocks.empty()) {
    fprintf(stderr, "kjit-report: annotate needs a bbcount recording (this one is %s)\n", c.rec.tool().c_str());
    return 2;
  }
  Coverage cov = make_coverage(c.rec, c.slide);
  uint64_t total = 0, expected = 0;
  size_t nfunc = 0;
  for (const Symbol *s : cov.entered(c.rec)) {
    if (fnmatch(func.c_str(), s->name.c_str(), 0)) continue;
    nfunc++;
    std::vector<uint8_t> bytes;
    if (!c.dbg->read(s->addr - c.slide, s->size, bytes)) {
      fprintf(stderr, "kjit-report: %s is not in the vmlinux's text\n", s->name.c_str());
      return 1;
    }
    fprintf(c.out, "%s (%u bytes):\n", s->name.c_str(), s->size);
    for (size_t off = 0; off < bytes.size();) {
      ZydisDisassembledInstruction insn;
      uint64_t a = s->addr + off;
      if (!ZYAN_SUCCESS(ZydisDisassembleATT(ZYDIS_MACHINE_MODE_LONG_64, a, bytes.data() + off,
                                            bytes.size() - off, &insn))) {
        fprintf(c.out, "%12s  %6zx:  (bytes)\n", "", off);
        off++;
        continue;
      }
      uint64_t n = cov.count_at(a);
      total += n;
      LineRow row;
      std::string src;
      if (c.dbg->line_at(a - c.slide, row)) src = "  " + row.file + ":" + std::to_string(row.line);
      if (n) fprintf(c.out, "%12" PRIu64 "  %6zx:  %-40s%s\n", n, off, insn.text, src.c_str());
      else fprintf(c.out, "%12s  %6zx:  %-40s%s\n", "", off, insn.text, src.c_str());
      off += insn.info.length;
    }
    for (const auto &b : c.rec.blocks)
      if (c.rec.symbol_at(b.addr) == s) expected += b.count * b.ninsn;
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
