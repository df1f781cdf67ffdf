/* SPDX-License-Identifier: GPL-2.0 */
// An address or value as the simulator's messages write it: 0x, lower-case
// hex, no padding.
#ifndef KJIT_SIM_HEX_TEXT_H
#define KJIT_SIM_HEX_TEXT_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace kjit::sim {

inline std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace kjit::sim

#endif
