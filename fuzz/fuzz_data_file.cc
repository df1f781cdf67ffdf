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
  if (!r.stext || r.tool().empty()) __builtin_trap();
  return 0;
}
