/* SPDX-License-Identifier: GPL-2.0 */
// The simulator's implementation of include/kjit/os_shim.h, and the gate
// pages through which translated code reaches the host.
//
// The shim is process-global because the engine is (one engine per
// process).  The host configures it before kjit_engine_init and resets it
// after kjit_engine_fini.
//
// Gate page layout (kGateBase by default, kGatePages pages):
//   page 0:  gate_direct at +0, gate_indirect at +16, gate_sched at +32
//            (the scheduler gate, with __schedule among the symbols),
//            filled with int3 so that a gate reached without its hook
//            faults loudly;
//   page 1+: host-call gates, 8 bytes apart, filled with `ret`: the hook
//            calls the host function and lets the `ret` return to the caller.
#ifndef KJIT_SIM_SIM_SHIM_H
#define KJIT_SIM_SIM_SHIM_H

#include <cstdint>
#include <string>
#include <vector>

#include "capture_file.h"
#include "emulator.h"
#include "kjit/os_shim.h"
#include "kjit/plugin.h"  // KJIT_REG_*
#include "sim_symbols.h"

namespace kjit::sim {

constexpr uint64_t kGateBase = 0xffffffffe0000000ull;
constexpr uint64_t kGatePages = 4;
constexpr uint64_t kGateDirectOffset = 0;
constexpr uint64_t kGateIndirectOffset = 16;
constexpr uint64_t kGateSchedOffset = 32;
constexpr uint64_t kHostGateStride = 8;

struct ShimConfig {
  const Capture *capture = nullptr;     // code the engine may read/translate
  const SymbolTable *symbols = nullptr;  // optional
  Emulator *emulator = nullptr;         // optional until the run starts
  kjit_os_memory memory{};              // for host-call argument translation
  uint64_t gate_base = kGateBase;
  // Where each simulated CPU's copy of the per-CPU window is in the
  // emulated address space (index = CPU): host-call arguments pointing
  // there are handed to the host as memory.percpu_host_views[cpu].
  std::vector<uint64_t> percpu_exec_bases;
};

// Installs the configuration (replacing any previous one; host-call gates
// are forgotten).
void shim_configure(const ShimConfig &cfg);
void shim_reset();

// Kernel facts from the symbol table (zeros if absent) plus the gate addresses.
kjit_os_kernel_facts shim_kernel_facts();
uint64_t shim_gate_direct();
uint64_t shim_gate_indirect();
uint64_t shim_gate_sched();
// The whole gate area [gate_base, gate_base + kGatePages pages).
bool shim_is_gate_address(uint64_t addr);

// Maps the gate pages into `emu` and hooks the host-call gates on them.
// The dispatcher gates (direct/indirect) are the translated runner's to hook.
std::string shim_map_gates(Emulator &emu);

// Log lines the engine emitted (also printed to stderr unless quiet).
const std::vector<std::string> &shim_log_lines();
void shim_set_quiet(bool quiet);
// Lock misuse seen (nested lock, unlock without lock): a kernel deadlock or
// corruption that the simulator can only report.
uint64_t shim_lock_errors();

}  // namespace kjit::sim
#endif
