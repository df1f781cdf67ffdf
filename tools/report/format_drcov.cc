// SPDX-License-Identifier: GPL-2.0
// drcov: DynamoRIO's coverage format (version 2, flavor drcov) with the
// kernel as module 0 based at _stext and each loaded module that ran code
// as a module of its own based at its core (the MODULES section), so
// offsets survive KASLR and module load addresses; each executed block
// once, as (offset u32, size u16, module u16).
#include <cinttypes>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "formats.h"

namespace kjit::report {
namespace {

struct DrModule {
  uint16_t id;
  std::string path;
  uint64_t base, end;
};

}  // namespace

int format_drcov(const Context &c) {
  if (c.rec.blocks.empty()) {
    fprintf(stderr, "kjit-report: drcov needs a bbcount recording (this one is %s)\n", c.rec.tool().c_str());
    return 2;
  }
  // The table: vmlinux first, then the modules that ran code, in address order.
  std::vector<DrModule> table{{0, "vmlinux", c.rec.stext, c.rec.stext}};
  std::map<const Module *, uint16_t> id_of;
  for (const auto &b : c.rec.blocks)
    if (const Module *m = b.count ? c.rec.module_at(b.addr) : nullptr) id_of.emplace(m, 0);
  for (auto &[m, id] : id_of) {   // Module records are in address order, so are their pointers
    id = (uint16_t)table.size();
    table.push_back({id, m->name + ".ko", m->base, m->base + m->size});
  }
  struct __attribute__((packed)) Entry { uint32_t start; uint16_t size, mod; };
  std::vector<Entry> bbs;
  for (const auto &b : c.rec.blocks) {
    if (!b.count) continue;
    if (const Module *m = c.rec.module_at(b.addr)) {
      bbs.push_back({(uint32_t)(b.addr - m->base), (uint16_t)b.len, id_of[m]});
    } else if (b.addr >= c.rec.stext && b.addr - c.rec.stext <= UINT32_MAX) {
      table[0].end = std::max(table[0].end, b.addr + b.len);
      bbs.push_back({(uint32_t)(b.addr - c.rec.stext), (uint16_t)b.len, 0});
    }
  }
  fprintf(c.out, "DRCOV VERSION: 2\nDRCOV FLAVOR: kjit\n");
  fprintf(c.out, "Module Table: version 2, count %zu\n", table.size());
  fprintf(c.out, "Columns: id, base, end, entry, checksum, timestamp, path\n");
  for (const DrModule &m : table)
    fprintf(c.out, " %u, 0x%" PRIx64 ", 0x%" PRIx64 ", 0x0000000000000000, 0x00000000, 0x00000000, %s\n", m.id,
            m.base, m.end, m.path.c_str());
  fprintf(c.out, "BB Table: %zu bbs\n", bbs.size());
  if (!bbs.empty()) fwrite(bbs.data(), sizeof(Entry), bbs.size(), c.out);
  return 0;
}

}  // namespace kjit::report
