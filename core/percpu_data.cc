// SPDX-License-Identifier: GPL-2.0
// kjit_alloc_percpu and its readers (include/kjit/plugin.h), over the
// per-CPU window the host hands the engine at creation.
#include "core/percpu_data.h"

#include "core/engine_state.h"

using namespace kjit;

namespace {

// Offset of host pointer `p` in CPU 0's copy of the window, or -1.
int64_t window_offset(uint64_t p) {
  const kjit_os_memory &m = g_engine.mem;
  if (!g_engine.initialized || !m.percpu_size) return -1;
  const uint64_t base = reinterpret_cast<uint64_t>(m.percpu_host_views[0]);
  return p >= base && p - base < m.percpu_size ? static_cast<int64_t>(p - base) : -1;
}

}  // namespace

namespace kjit {

void *percpu_alloc_locked(uint64_t size) {
  EngineState &g = g_engine;
  const kjit_os_memory &m = g.mem;
  // Own cache line, as kjit_alloc: the copies of one CPU are hot together.
  const uint64_t start = (g.percpu_used + 63) & ~63ull;
  if (start + size > m.percpu_size || start + size < start) return nullptr;
  g.percpu_used = start + size;
  for (uint32_t cpu = 0; cpu < m.percpu_ncpus; cpu++)
    if (m.percpu_host_views[cpu]) __builtin_memset(m.percpu_host_views[cpu] + start, 0, size);
  return m.percpu_host_views[0] + start;
}

bool percpu_gs_address(uint64_t p, uint64_t *gs_address) {
  const int64_t off = window_offset(p);
  if (off < 0) return false;
  *gs_address = g_engine.mem.percpu_offset + static_cast<uint64_t>(off);
  return true;
}

}  // namespace kjit

extern "C" {

void *kjit_alloc_percpu(uint64_t size) {
  EngineState &g = g_engine;
  if (!g.initialized || size == 0 || !g.mem.percpu_size) return nullptr;
  // From a plugin callback the engine lock is already held by this CPU.
  if (g.callback_cpu == static_cast<int32_t>(kjit_os_cpu())) return percpu_alloc_locked(size);
  EngineLock lock;
  return percpu_alloc_locked(size);
}

uint32_t kjit_percpu_ncpus(void) {
  return g_engine.initialized && g_engine.mem.percpu_size ? g_engine.mem.percpu_ncpus : 0;
}

void *kjit_percpu_copy(const void *p, uint32_t cpu) {
  const int64_t off = window_offset(reinterpret_cast<uint64_t>(p));
  if (off < 0 || cpu >= g_engine.mem.percpu_ncpus || !g_engine.mem.percpu_host_views[cpu]) return nullptr;
  return g_engine.mem.percpu_host_views[cpu] + off;
}

uint64_t kjit_percpu_sum_u64(const void *p) {
  if (!p) return 0;
  if (window_offset(reinterpret_cast<uint64_t>(p)) < 0)
    return __atomic_load_n(static_cast<const uint64_t *>(p), __ATOMIC_RELAXED);
  uint64_t sum = 0;
  // Each copy is written only by its CPU, one aligned store at a time: a
  // relaxed load sees a whole value, never a torn one.
  for (uint32_t cpu = 0; cpu < g_engine.mem.percpu_ncpus; cpu++)
    if (const void *c = kjit_percpu_copy(p, cpu))
      sum += __atomic_load_n(static_cast<const uint64_t *>(c), __ATOMIC_RELAXED);
  return sum;
}

}  // extern "C"
