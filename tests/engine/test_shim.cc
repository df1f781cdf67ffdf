// SPDX-License-Identifier: GPL-2.0
// A minimal OS shim for engine unit tests: code is read from a table of byte
// regions the test registers; the lock and quiescence are recorded so tests
// can check the order the engine uses them in.
#include "engine/test_shim.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "core/liveness.h"
#include "kjit/os_shim.h"

namespace {
struct Region {
  uint64_t addr;
  std::vector<uint8_t> bytes;
};
std::vector<Region> g_regions;
std::vector<ShimCodeRead> g_code_reads;

uint64_t read_regions(uint64_t addr, uint8_t *out, uint64_t len) {
  for (const Region &r : g_regions) {
    if (addr >= r.addr && addr < r.addr + r.bytes.size()) {
      uint64_t n = std::min<uint64_t>(len, r.addr + r.bytes.size() - addr);
      memcpy(out, r.bytes.data() + (addr - r.addr), n);
      return n;
    }
  }
  return 0;
}

std::vector<ShimQuiesce> g_quiesces;
void (*g_on_quiesce)(uint64_t, uint64_t);
int g_lock_depth;
struct ExtableSite {
  uint64_t site, fixup;
  int answer;
};
std::vector<ExtableSite> g_extable;
std::vector<ShimMirror> g_mirrors;
std::vector<uint64_t> g_native_leaves;
std::vector<std::pair<uint64_t, uint64_t>> g_c_functions;
std::vector<std::pair<uint64_t, uint64_t>> g_foreign;
std::vector<uint64_t> g_fentry_sites;
ExtableSite *extable_site(uint64_t addr) {
  for (ExtableSite &e : g_extable)
    if (e.site == addr) return &e;
  return nullptr;
}
}  // namespace

// New code at old addresses: what a flush after text patching does in the
// kernel, the liveness memo must forget too.
void test_shim_reset() {
  g_regions.clear();
  g_code_reads.clear();
  g_quiesces.clear();
  g_extable.clear();
  g_mirrors.clear();
  g_native_leaves.clear();
  g_c_functions.clear();
  g_foreign.clear();
  g_fentry_sites.clear();
  g_on_quiesce = nullptr;
  kjit::forget_liveness();
}
const std::vector<ShimQuiesce> &test_shim_quiesces() { return g_quiesces; }
const std::vector<ShimCodeRead> &test_shim_code_reads() { return g_code_reads; }
void test_shim_on_quiesce(void (*fn)(uint64_t, uint64_t)) { g_on_quiesce = fn; }
int test_shim_lock_depth() { return g_lock_depth; }
void test_shim_add_code(uint64_t addr, const std::vector<uint8_t> &bytes) {
  g_regions.push_back({addr, bytes});
}
bool test_shim_write_code(uint64_t addr, const std::vector<uint8_t> &bytes) {
  for (Region &r : g_regions) {
    if (addr >= r.addr && addr + bytes.size() <= r.addr + r.bytes.size()) {
      memcpy(r.bytes.data() + (addr - r.addr), bytes.data(), bytes.size());
      return true;
    }
  }
  return false;
}
void test_shim_add_extable(uint64_t site, uint64_t fixup, int answer) { g_extable.push_back({site, fixup, answer}); }
void test_shim_set_mirror_answer(uint64_t site, int answer) {
  if (ExtableSite *e = extable_site(site)) e->answer = answer;
}
const std::vector<ShimMirror> &test_shim_mirrors() { return g_mirrors; }
void test_shim_add_native_leaf(uint64_t addr) { g_native_leaves.push_back(addr); }
void test_shim_add_c_function(uint64_t lo, uint64_t hi) { g_c_functions.emplace_back(lo, hi); }
void test_shim_add_foreign(uint64_t lo, uint64_t hi) { g_foreign.emplace_back(lo, hi); }
void test_shim_add_fentry_site(uint64_t site) { g_fentry_sites.push_back(site); }


extern "C" {
uint64_t kjit_os_read_code(uint64_t addr, uint8_t *out, uint64_t len) {
  g_code_reads.push_back({addr, len});
  return read_regions(addr, out, len);
}
int kjit_os_may_translate(uint64_t addr) {
  uint8_t b;
  return read_regions(addr, &b, 1) == 1;
}
enum kjit_os_site_kind kjit_os_classify_site(uint64_t addr, int) {
  return extable_site(addr) ? KJIT_SITE_EXTABLE : KJIT_SITE_PLAIN;
}
int kjit_os_c_abi_return(uint64_t addr) {
  for (const auto &f : g_c_functions)
    if (addr >= f.first && addr < f.second) return 1;
  return 0;
}
int kjit_os_fentry_site(uint64_t addr) {
  for (uint64_t s : g_fentry_sites)
    if (s == addr) return 1;
  return 0;
}
int kjit_os_is_text(uint64_t addr) {
  for (const auto &f : g_foreign)
    if (addr >= f.first && addr < f.second) return 0;
  return 1;
}
int kjit_os_callable_natively(uint64_t addr) {
  for (uint64_t a : g_native_leaves)
    if (a == addr) return 1;
  return 0;
}
uint64_t kjit_os_extable_fixup(uint64_t addr) {
  const ExtableSite *e = extable_site(addr);
  return e ? e->fixup : 0;
}
int kjit_os_mirror_extable(uint64_t site, uint64_t copy, uint64_t fixup) {
  const ExtableSite *e = extable_site(site);
  int answer = e ? e->answer : 0;
  g_mirrors.push_back({site, copy, fixup, answer});
  return answer;
}
void kjit_os_code_written(uint64_t, uint64_t) {}
void kjit_os_lock(void) { g_lock_depth++; }
void kjit_os_unlock(void) { g_lock_depth--; }
int kjit_os_trylock(void) {
  if (g_lock_depth) return 0;
  g_lock_depth++;
  return 1;
}
uint32_t kjit_os_cpu(void) { return 0; }
void kjit_os_quiesce(uint64_t lo, uint64_t hi) {
  g_quiesces.push_back({lo, hi, g_lock_depth});
  if (g_on_quiesce) g_on_quiesce(lo, hi);
}
void kjit_os_log(const char *msg) { fprintf(stderr, "kjit: %s\n", msg); }
void kjit_os_symbolize(uint64_t, char *out, uint64_t len) {
  if (len) out[0] = 0;
}
// Same address space as the tests' routines, like the kernel.
uint64_t kjit_os_host_call_gate(uint64_t) { return 0; }
uint64_t kjit_os_host_context_gate(uint64_t) { return 0; }
}
