// SPDX-License-Identifier: GPL-2.0
// kjit-report's reader of kjit.data (tools/report/data_file.cc) on arbitrary
// bytes: it must refuse or accept, never crash, read out of bounds or leave
// an accepted recording inconsistent.
#include <cstddef>
#include <cstdint>
#include <string>

#include "data_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kjit::report::Recording r;
  std::string error;
  if (!kjit::report::parse_recording(data, size, r, error)) {
    if (error.empty()) __builtin_trap();  // every refusal says why
    return 0;
  }
  // What the formats rely on once a file is accepted.
  for (const auto &b : r.blocks)
    if (!b.len || !b.ninsn || b.len > 4096) __builtin_trap();
  for (const auto &s : r.symbols) (void)r.name_of(s.addr + s.size / 2);
  // Modules: sorted, not empty, not overlapping; a module's symbols inside it.
  for (size_t i = 0; i < r.modules.size(); i++) {
    const auto &m = r.modules[i];
    if (!m.size || m.base + m.size < m.base) __builtin_trap();
    if (i && r.modules[i - 1].base + r.modules[i - 1].size > m.base) __builtin_trap();
    (void)r.name_of(m.base + m.size - 1);
  }
  for (const auto &s : r.symbols) {
    const kjit::report::Module *m = r.module_at(s.addr);
    if ((m ? m->name : std::string()) != s.module) __builtin_trap();
    if (m && s.addr + s.size > m->base + m->size) __builtin_trap();
  }
  if (!r.stext || r.tool().empty()) __builtin_trap();
  return 0;
}
