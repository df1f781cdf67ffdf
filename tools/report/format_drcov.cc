// SPDX-License-Identifier: GPL-2.0
// drcov: DynamoRIO's coverage format (version 2, flavor drcov) with the
// kernel as module 0 based at _stext, so offsets survive KASLR; each
// executed block once, as (offset u32, size u16, module u16).
#include <cinttypes>

#include "formats.h"

namespace kjit::report {

int format_drcov(const Context &c) {
  if (c.rec.blocks.empty()) {
    fprintf(stderr, "kjit-report: drcov needs a bbcount recording (this one is %s)\n", c.rec.tool().c_str());
    return 2;
  }
  uint64_t base = c.rec.stext, end = base;
  size_t n = 0;
  for (const auto &b : c.rec.blocks) {
    if (!b.count || b.addr < base || b.addr - base > UINT32_MAX) continue;
    if (b.addr + b.len > end) end = b.addr + b.len;
    n++;
  }
  fprintf(c.out, "DRCOV VERSION: 2\nDRCOV FLAVOR: kjit\n");
  fprintf(c.out, "Module Table: version 2, count 1\n");
  fprintf(c.out, "Columns: id, base, end, entry, checksum, timestamp, path\n");
  fprintf(c.out, " 0, 0x%" PRIx64 ", 0x%" PRIx64 ", 0x0000000000000000, 0x00000000, 0x00000000, vmlinux\n",
          base, end);
  fprintf(c.out, "BB Table: %zu bbs\n", n);
  for (const auto &b : c.rec.blocks) {
    if (!b.count || b.addr < base || b.addr - base > UINT32_MAX) continue;
    struct __attribute__((packed)) { uint32_t start; uint16_t size, mod; } e = {
        (uint32_t)(b.addr - base), (uint16_t)b.len, 0};
    fwrite(&e, sizeof e, 1, c.out);
  }
  return 0;
}

}  // namespace kjit::report
