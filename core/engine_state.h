/* SPDX-License-Identifier: GPL-2.0 */
// The engine's single global state.  Plain data with constant
// initialisation only: the core has no global constructors.  The code cache
// is `epochs`: two halves, one active, the other free or retired (epoch.h).
#pragma once
#include "arch/arch.h"
#include "core/address_set.h"
#include "core/epoch.h"
#include "kjit/engine.h"

namespace kjit {

constexpr uint32_t kMaxPlugins = 8;
// Stop addresses whose completions are counted per CPU (departures.cc).
constexpr uint32_t kCompletionCells = 8;

struct EngineState {
  bool initialized;
  kjit_os_memory mem;
  kjit_os_kernel_facts facts;
  kjit_engine_options opt;
  x86::Decoder decoder;
  Epoch epochs[2];
  uint8_t current;
  uint8_t reclaim_pending;
  uint64_t data_used;
  uint64_t percpu_used;  // bytes of the per-CPU window handed out
  // Return addresses of entries (every call site of every attached
  // function that has entered) and the simulator's sentinel: 3,072 at most.
  // Entries' return addresses: with every traceable function attached,
  // thousands of call sites.
  AddressSet<14> stops;
  const kjit_plugin *plugins[kMaxPlugins];
  uint32_t nplugins;
  // How many registered plugins have on_entry / on_exit, kept under the
  // lock and read without it: entries and exits with no callback to run
  // (the common case) skip the lock.
  uint32_t entry_callbacks;
  uint32_t exit_callbacks;
  kjit_engine_stats stats;
  // How entries ended (core/departures.h): in the data window, host view.
  kjit_engine_departures *departures;
  kjit_departure_site *departure_sites;
  uint32_t ndeparture_sites;
  uint32_t max_departure_sites;
  // Per-CPU cells counting the completions at the first kCompletionCells
  // stop addresses (departures.cc): in the per-CPU window, CPU 0's view;
  // null until the first is needed, or when the window has no room.
  uint64_t *completion_cells;
  uint32_t completion_cell_site[kCompletionCells];
  uint32_t ncompletion_cells;
  // The CPU running plugin callbacks (under the engine lock), or -1: plugin
  // calls back into the engine (kjit_alloc) must not take the lock again.
  int32_t callback_cpu;

  Epoch &epoch() { return epochs[current]; }
  bool is_stop(uint64_t pc) const { return stops.contains(pc); }
  // Routines of plugins live in the same address space as translated code
  // (kernel), or behind host call gates (simulator).
  bool routines_in_same_space() const { return kjit_os_host_call_gate(0) == 0; }
};

extern EngineState g_engine;

// Zeroed plugin data from the data window; the caller holds the engine lock
// (or the engine is not running yet).  nullptr when the window is full.
void *data_alloc_locked(uint64_t size);

// RAII holder of the engine-wide OS lock.
class EngineLock {
 public:
  EngineLock() { kjit_os_lock(); }
  ~EngineLock() { kjit_os_unlock(); }
  EngineLock(const EngineLock &) = delete;
  EngineLock &operator=(const EngineLock &) = delete;
};

}  // namespace kjit
