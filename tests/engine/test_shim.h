#pragma once
#include <cstdint>
#include <vector>
void test_shim_reset();
void test_shim_add_code(uint64_t addr, const std::vector<uint8_t> &bytes);

// What the engine asked of the host's quiescence, in call order.
struct ShimQuiesce {
  uint64_t lo, hi;
  int lock_depth;  // engine lock holds at the time (must be 0: it may sleep)
};
const std::vector<ShimQuiesce> &test_shim_quiesces();
// Runs inside each kjit_os_quiesce, before it returns (nullptr: none).
void test_shim_on_quiesce(void (*fn)(uint64_t lo, uint64_t hi));
int test_shim_lock_depth();
