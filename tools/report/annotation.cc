// SPDX-License-Identifier: GPL-2.0
#include "annotation.h"

#include "arch/x86/disasm/disassembly.h"

namespace kjit::report {

bool annotate_function(const Symbol &s, const Coverage &cov, const DebugImages &dbg,
                       std::vector<AnnotatedInsn> &out) {
  std::vector<uint8_t> bytes;
  if (!dbg.read(s.addr, s.size, bytes)) return false;
  for (size_t off = 0; off < bytes.size();) {
    const uint64_t a = s.addr + off;
    AnnotatedInsn ai;
    ai.offset = static_cast<uint32_t>(off);
    uint32_t len = 1;
    if (x86::disasm::att_text(a, bytes.data() + off, bytes.size() - off, &ai.text, &len)) {
      ai.count = cov.count_at(a);
    } else {
      ai.text = "(bytes)";
    }
    LineRow row;
    if (dbg.line_at(a, row)) ai.file = row.file, ai.line = row.line;
    out.push_back(std::move(ai));
    off += len;
  }
  return true;
}

uint64_t executed_in(const Recording &r, const Symbol &s) {
  uint64_t n = 0;
  for (const auto &b : r.blocks)
    if (r.symbol_at(b.addr) == &s) n += b.count * b.ninsn;
  return n;
}

}  // namespace kjit::report
