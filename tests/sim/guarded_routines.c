// SPDX-License-Identifier: GPL-2.0
/* Analysis routines of guarded_call_test.cc, compiled plain (as
 * plugins/CMakeLists.txt compiles the example plugins) so the engine can
 * inline them. */
#include <stdint.h>

void guarded_test_inc(uint64_t *counter) { (*counter)++; }

/* The KCOV trace-PC append (os/linux/kcov.c, kcov_trace_pc_inline) on a
 * per-CPU { area, size }: count in area[0], then the PC. */
struct guarded_test_cover {
  uint64_t *area;
  uint64_t size;
};
void guarded_test_append(struct guarded_test_cover *c, uint64_t pc) {
  uint64_t *area = *(uint64_t *volatile *)&c->area;
  uint64_t pos;
  if (!area) return;
  pos = *(volatile uint64_t *)&area[0] + 1;
  if (pos < *(volatile uint64_t *)&c->size) {
    *(volatile uint64_t *)&area[0] = pos;
    area[pos] = pc;
  }
}
