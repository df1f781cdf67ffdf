/* SPDX-License-Identifier: GPL-2.0 */
#pragma once
#include <cstdint>
#include <vector>
void test_shim_reset();
void test_shim_add_code(uint64_t addr, const std::vector<uint8_t> &bytes);
// Rewrites code added before (a text change); false if no region holds it.
bool test_shim_write_code(uint64_t addr, const std::vector<uint8_t> &bytes);

// Every kjit_os_read_code the engine made, in call order.
struct ShimCodeRead {
  uint64_t addr, len;
};
const std::vector<ShimCodeRead> &test_shim_code_reads();

// What the engine asked of the host's quiescence, in call order.
struct ShimQuiesce {
  uint64_t lo, hi;
  int lock_depth;  // engine lock holds at the time (must be 0: it may sleep)
};
const std::vector<ShimQuiesce> &test_shim_quiesces();
// Runs inside each kjit_os_quiesce, before it returns (nullptr: none).
void test_shim_on_quiesce(void (*fn)(uint64_t lo, uint64_t hi));
int test_shim_lock_depth();

// An exception-table site at `site` whose fixup is `fixup` (0: the host
// does not say), and what kjit_os_mirror_extable answers for it (1 done, 0
// never, -1 not now).  Each mirror request is recorded.
void test_shim_add_extable(uint64_t site, uint64_t fixup, int mirror_answer);
void test_shim_set_mirror_answer(uint64_t site, int mirror_answer);
struct ShimMirror {
  uint64_t site, copy, fixup;  // fixup: the one the engine passed (0: original)
  int answer;
};
const std::vector<ShimMirror> &test_shim_mirrors();

// A native leaf at `addr` (no code registered there: never translated) that
// kjit_os_callable_natively allows the cache to call.
void test_shim_add_native_leaf(uint64_t addr);

// Code in [lo, hi) is a compiled C function's (kjit_os_c_abi_return).
void test_shim_add_c_function(uint64_t lo, uint64_t hi);

// Memory in [lo, hi) is not text (kjit_os_is_text): another tool's code.
void test_shim_add_foreign(uint64_t lo, uint64_t hi);

// `site` is an fentry site (kjit_os_fentry_site).
void test_shim_add_fentry_site(uint64_t site);
