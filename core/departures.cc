// SPDX-License-Identifier: GPL-2.0
#include "core/departures.h"

#include "core/engine_state.h"
#include "core/percpu_data.h"
#include "kjit/plugin.h"

namespace kjit {
namespace {

// Sites the data window holds per engine: distinct native targets, a few
// hundred for every system call attached; at most 1/10 of a small window.
constexpr uint32_t kMaxDepartureSites = 2048;
uint32_t max_sites(uint64_t data_size) {
  uint64_t n = data_size / 10 / sizeof(kjit_departure_site);
  return n < kMaxDepartureSites ? static_cast<uint32_t>(n) : kMaxDepartureSites;
}

uint64_t exec_of(const void *p) {
  const kjit_os_memory &m = g_engine.mem;
  return m.data_exec_base + static_cast<uint64_t>(static_cast<const uint8_t *>(p) - m.data_host_view);
}

void add(uint64_t *cell) { __atomic_fetch_add(cell, 1, __ATOMIC_RELAXED); }

// The site of (target, why), added when missing; -1 when the table is
// full.  Engine lock held.
int32_t site_for(uint64_t target, kjit_departure why) {
  EngineState &g = g_engine;
  for (uint32_t i = 0; i < g.ndeparture_sites; i++) {
    kjit_departure_site &s = g.departure_sites[i];
    if (s.target == target && s.why == static_cast<uint32_t>(why)) return static_cast<int32_t>(i);
  }
  if (g.ndeparture_sites >= g.max_departure_sites) return -1;
  kjit_departure_site &s = g.departure_sites[g.ndeparture_sites];
  s.target = target;
  s.why = static_cast<uint32_t>(why);
  // Published after the site is filled: readers scan up to the count.
  __atomic_store_n(&g.ndeparture_sites, g.ndeparture_sites + 1, __ATOMIC_RELEASE);
  return static_cast<int32_t>(g.ndeparture_sites - 1);
}

// The shared cell counting (target, why): its site's, or the reason's
// total when the table is full.  Engine lock held.
uint64_t *cell_for(uint64_t target, kjit_departure why) {
  int32_t i = site_for(target, why);
  return i >= 0 ? &g_engine.departure_sites[i].count : &g_engine.departures->count[why];
}

// The per-CPU cell of `site`, given one if there is room; null when none.
// Every CPU's system calls end at the same few stop addresses: a shared
// cell there would be one cache line all of them write with a locked add.
// Engine lock held.
uint64_t *completion_cell(int32_t site) {
  EngineState &g = g_engine;
  if (site < 0) return nullptr;
  for (uint32_t c = 0; c < g.ncompletion_cells; c++)
    if (g.completion_cell_site[c] == static_cast<uint32_t>(site)) return &g.completion_cells[c];
  if (g.ncompletion_cells >= kCompletionCells) return nullptr;
  if (!g.completion_cells)
    g.completion_cells = static_cast<uint64_t *>(percpu_alloc_locked(kCompletionCells * sizeof(uint64_t)));
  if (!g.completion_cells) return nullptr;
  g.completion_cell_site[g.ncompletion_cells] = static_cast<uint32_t>(site);
  __atomic_store_n(&g.ncompletion_cells, g.ncompletion_cells + 1, __ATOMIC_RELEASE);
  return &g.completion_cells[g.ncompletion_cells - 1];
}

// The per-CPU count of site `i` summed over the CPUs (0 without a cell).
uint64_t percpu_count_of_site(uint32_t i) {
  const EngineState &g = g_engine;
  uint32_t n = __atomic_load_n(&g.ncompletion_cells, __ATOMIC_ACQUIRE);
  for (uint32_t c = 0; c < n; c++)
    if (g.completion_cell_site[c] == i) return kjit_percpu_sum_u64(&g.completion_cells[c]);
  return 0;
}

}  // namespace

bool departures_init() {
  EngineState &g = g_engine;
  g.departures = static_cast<kjit_engine_departures *>(data_alloc_locked(sizeof(kjit_engine_departures)));
  g.max_departure_sites = max_sites(g.mem.data_size);
  g.departure_sites = static_cast<kjit_departure_site *>(
      data_alloc_locked(sizeof(kjit_departure_site) * (g.max_departure_sites ? g.max_departure_sites : 1)));
  g.ndeparture_sites = 0;
  g.completion_cells = nullptr;
  g.ncompletion_cells = 0;
  if (!g.departure_sites) g.departures = nullptr;
  return g.departures != nullptr;
}

kjit_departure departure_for_native_target(uint64_t target) {
  return g_engine.is_stop(target) ? KJIT_DEPART_COMPLETED : KJIT_DEPART_NATIVE_CALL;
}

void emit_departure_count(CodeWriter &w, uint64_t target, kjit_departure why, bool keep_flags,
                          bool kernel_gs) {
  if (!g_engine.departures) return;
  int32_t site = site_for(target, why);
  uint64_t gs = 0;
  uint64_t *own = kernel_gs && why == KJIT_DEPART_COMPLETED ? completion_cell(site) : nullptr;
  if (own && percpu_gs_address(reinterpret_cast<uint64_t>(own), &gs) && arch::absolute_addressable(gs)) {
    arch::emit_count_increment(w, gs, true, keep_flags);
    return;
  }
  uint64_t cell = exec_of(site >= 0 ? &g_engine.departure_sites[site].count : &g_engine.departures->count[why]);
  if (!arch::absolute_addressable(cell)) return;
  arch::emit_count_increment(w, cell, false, keep_flags);
}

void count_departure(uint64_t target, kjit_departure why) {
  if (g_engine.departures) add(cell_for(target, why));
}

void count_entry() {
  if (g_engine.departures) add(&g_engine.departures->entered);
}

void count_entry_declined(kjit_departure why) {
  if (g_engine.departures && why < KJIT_DEPART_COUNT) add(&g_engine.departures->declined_at_entry[why]);
}

uint64_t native_exit_trampoline(Epoch &epoch, uint64_t target, kjit_departure why,
                                bool keep_flags) {
  if (!g_engine.departures) return target;
  for (uint32_t i = 0; i < epoch.nnative_exits; i++) {
    const NativeExit &n = epoch.native_exits[i];
    if (n.target == target && n.why == why && n.keep_flags == keep_flags) return epoch.exec_at(n.code_offset);
  }
  if (epoch.nnative_exits >= epoch.max_native_exits) return target;
  uint32_t start = epoch.code_used;
  CodeWriter w(epoch.write_at(start), epoch.exec_at(start), epoch.code_size - start);
  emit_departure_count(w, target, why, keep_flags);
  arch::emit_jump_anywhere(w, target);
  if (w.overflowed()) return target;
  epoch.code_used += w.size();
  kjit_os_code_written(epoch.exec_at(start), w.size());
  epoch.native_exits[epoch.nnative_exits++] = {target, start, static_cast<uint8_t>(why), keep_flags};
  return epoch.exec_at(start);
}

}  // namespace kjit

using namespace kjit;

extern "C" void kjit_engine_get_departures(kjit_engine_departures *out) {
  const EngineState &g = g_engine;
  __builtin_memset(out, 0, sizeof(*out));
  if (!g.initialized || !g.departures) return;
  out->entered = __atomic_load_n(&g.departures->entered, __ATOMIC_RELAXED);
  for (uint32_t i = 0; i < KJIT_DEPART_COUNT; i++) {
    out->count[i] = __atomic_load_n(&g.departures->count[i], __ATOMIC_RELAXED);
    out->declined_at_entry[i] = __atomic_load_n(&g.departures->declined_at_entry[i], __ATOMIC_RELAXED);
  }
  uint32_t n = __atomic_load_n(&g.ndeparture_sites, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++) {
    const kjit_departure_site &s = g.departure_sites[i];
    if (s.why < KJIT_DEPART_COUNT)
      out->count[s.why] += __atomic_load_n(&s.count, __ATOMIC_RELAXED) + percpu_count_of_site(i);
  }
}

extern "C" void kjit_engine_reset_departures(void) {
  EngineState &g = g_engine;
  if (!g.initialized || !g.departures) return;
  __atomic_store_n(&g.departures->entered, 0, __ATOMIC_RELAXED);
  for (uint32_t i = 0; i < KJIT_DEPART_COUNT; i++) {
    __atomic_store_n(&g.departures->count[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.departures->declined_at_entry[i], 0, __ATOMIC_RELAXED);
  }
  uint32_t n = __atomic_load_n(&g.ndeparture_sites, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n; i++) __atomic_store_n(&g.departure_sites[i].count, 0, __ATOMIC_RELAXED);
  uint32_t cells = __atomic_load_n(&g.ncompletion_cells, __ATOMIC_ACQUIRE);
  for (uint32_t c = 0; c < cells; c++)
    for (uint32_t cpu = 0; cpu < kjit_percpu_ncpus(); cpu++)
      if (auto *copy = static_cast<uint64_t *>(kjit_percpu_copy(&g.completion_cells[c], cpu)))
        __atomic_store_n(copy, 0, __ATOMIC_RELAXED);
}

extern "C" uint32_t kjit_engine_departure_sites(kjit_departure_site *out, uint32_t max) {
  const EngineState &g = g_engine;
  if (!g.initialized || !g.departures) return 0;
  uint32_t n = __atomic_load_n(&g.ndeparture_sites, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < n && i < max; i++) {
    out[i] = g.departure_sites[i];
    out[i].count = __atomic_load_n(&g.departure_sites[i].count, __ATOMIC_RELAXED) + percpu_count_of_site(i);
  }
  return n;
}
