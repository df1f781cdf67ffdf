// SPDX-License-Identifier: GPL-2.0
#include "c_functions.h"

#include <cstring>

namespace kjit::sim {

bool in_c_function(const Capture &cap, const SymbolTable &syms, uint64_t fentry, uint64_t addr) {
  const uint64_t start = syms.start_of(addr);
  // The attached function is entered after its fentry site (ftrace called
  // kjit from it), which the capture need not hold.  Only within the code
  // captured from the entry on: the capture's own symbols name few
  // functions, so the closest one below `addr` may be another's.
  const Region *entry = cap.find_region(cap.entry_pc);
  if (start && start + 5 == cap.entry_pc && entry && entry == cap.find_region(addr)) return true;
  const Region *r = start ? cap.find_region(start) : nullptr;
  if (!r || start - r->addr + 5 > r->bytes.size()) return false;
  const uint8_t *b = r->bytes.data() + (start - r->addr);
  static const uint8_t kFtraceNop[] = {0x0f, 0x1f, 0x44, 0x00, 0x00};  // nopl 0x0(%rax,%rax,1)
  if (!memcmp(b, kFtraceNop, sizeof kFtraceNop)) return true;
  if (b[0] != 0xe8 || !fentry) return false;
  int32_t rel;
  memcpy(&rel, b + 1, 4);
  return start + 5 + static_cast<int64_t>(rel) == fentry;
}

}  // namespace kjit::sim
