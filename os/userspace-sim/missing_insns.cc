// SPDX-License-Identifier: GPL-2.0
#include "missing_insns.h"

namespace kjit::sim {

void clmul64(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi) {
  uint64_t l = 0, h = 0;
  for (int i = 0; i < 64; i++)
    if ((b >> i) & 1) {
      l ^= a << i;
      if (i) h ^= a >> (64 - i);
    }
  *lo = l;
  *hi = h;
}

}  // namespace kjit::sim
