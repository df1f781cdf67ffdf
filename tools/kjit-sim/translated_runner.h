/* SPDX-License-Identifier: GPL-2.0 */
// Runs a capture through the engine: the emulated CPU executes the code
// cache, and the host serves the engine's gates (engine.h's protocol).
#ifndef KJIT_SIM_TRANSLATED_RUNNER_H
#define KJIT_SIM_TRANSLATED_RUNNER_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "capture_file.h"
#include "emulator.h"
#include "kjit/engine.h"
#include "sim_symbols.h"

namespace kjit::sim {

constexpr uint64_t kCodeCacheExecBase = 0xffffffffc0000000ull;
constexpr uint64_t kDataWindowExecBase = 0xffffffffd0000000ull;
// TranslatedOptions::percpu_offset: choose one that fits a disp32.
constexpr int64_t kAutoPercpuOffset = INT64_MIN;

struct TranslatedOptions {
  kjit_engine_options engine{};  // filled from kjit_engine_default_options()
  uint64_t arena_size = uint64_t{KJIT_DEFAULT_ARENA_KB} << 10;
  uint64_t code_size = uint64_t{KJIT_DEFAULT_CACHE_KB} << 10;
  uint64_t data_size = 4 << 20;
  uint64_t code_exec_base = kCodeCacheExecBase;
  uint64_t data_exec_base = kDataWindowExecBase;
  uint64_t budget = 10'000'000;  // instructions, gates and stubs included
  uint64_t stack_size = 64 * 1024;
  const kjit_plugin *plugin = nullptr;   // registered before the entry
  // Runs after kjit_engine_init and before the plugin is registered (the
  // plugins allocate their data window there).  Non-zero aborts the run.
  std::function<int()> plugin_init;
  const SymbolTable *symbols = nullptr;  // kernel facts and symbolization
  bool quiet = false;                    // engine log to stderr?
  // Simulated CPUs for per-CPU data (kjit_alloc_percpu).  CPU 0 runs with
  // the capture's gs base, CPU k with one k strides above it; each CPU's
  // copy of the per-CPU window is at its gs base + percpu_offset, with the
  // gs base itself in the u64 just below (the kernel's this_cpu_off).  Only
  // CPU 0 sees the captured kernel's own per-CPU data.
  uint32_t cpus = 2;
  uint64_t percpu_size = 32 << 10;            // 0: no per-CPU window
  int64_t percpu_offset = kAutoPercpuOffset;  // e.g. beyond 2 GiB to test that path
  // A translated call into the scheduler funnel (with __schedule among the
  // symbols) reaches the scheduler gate with [rsp] = the original return
  // address, as in the module; so does a translated call to one of
  // `native_calls` (code that is not captured: what the kernel ran outside
  // the cache), which the runner stops at its first byte.  The handler
  // plays the call: it sets the registers the task has when it continues
  // at the return address and returns that address, which the runner
  // enters through kjit_engine_resume like the module's kjit_sched_return;
  // 0 means it stopped the run (Emulator::fail).  Without a handler such a
  // call fails the run.
  std::function<uint64_t(Emulator &)> skipped_call;
  std::vector<uint64_t> native_calls;

  TranslatedOptions();
};

struct TranslatedResult {
  RunResult run;
  Regs final_regs;
  std::vector<MemWrite> writes;  // every write, engine regions included
  kjit_engine_stats stats{};
  uint64_t entry_target = 0;     // what kjit_engine_enter returned
  uint64_t cache_insns = 0;      // instructions executed in the code cache
  uint64_t direct_gates = 0;     // dispatcher round trips
  uint64_t indirect_gates = 0;
  uint64_t lock_errors = 0;      // shim-detected lock misuse by the engine
  std::vector<std::string> log;  // what the engine logged
  std::string error;             // setup error (no run happened), else ""
};

// One engine instance over one capture.  The engine stays alive until the
// object is destroyed, so callers can map cache addresses back and read the
// plugin's results after run().  Only one may exist at a time (the engine
// and the shim are process-global).
class TranslatedRunner {
 public:
  TranslatedRunner(const Capture &cap, const TranslatedOptions &opt);
  ~TranslatedRunner();
  TranslatedRunner(const TranslatedRunner &) = delete;
  TranslatedRunner &operator=(const TranslatedRunner &) = delete;

  // Runs the capture's entry on simulated CPU `cpu`.  The first run sets
  // the engine up; later ones enter again with the capture's registers and
  // stack (memory keeps what earlier runs wrote, the engine its cache).
  TranslatedResult run(uint32_t cpu = 0);
  // The gs base of simulated CPU `cpu`, and the emulated address of its
  // copy of the per-CPU window (valid after the first run).
  uint64_t gs_base_of(uint32_t cpu) const;
  uint64_t percpu_copy_of(uint32_t cpu) const;

  // The engine's own memory as the emulated CPU sees it (cache, data
  // window, gates): writes there are not program writes.
  bool is_engine_address(uint64_t addr) const;
  bool is_cache_address(uint64_t addr) const;
  // Original pc of a code-cache pc (0 if unknown); identity elsewhere.
  uint64_t original_pc(uint64_t pc) const;
  Emulator &emulator() { return *emu_; }
  // Sets TranslatedOptions::skipped_call and native_calls (before run()).
  void set_skipped_calls(std::function<uint64_t(Emulator &)> fn, std::vector<uint64_t> native_calls) {
    opt_.skipped_call = std::move(fn);
    opt_.native_calls = std::move(native_calls);
  }

 private:
  std::string place_areas();
  std::string setup();
  std::string setup_percpu(kjit_os_memory *mem);
  uint64_t percpu_stride() const;
  bool collides(uint64_t base, uint64_t size) const;
  void on_gate_direct(Emulator &emu, uint64_t pc);
  void reclaim_if_pending();
  uint64_t reclaims_ = 0;
  uint64_t gate_base_ = 0;  // the shim's gate pages (place_areas)
  uint64_t engine_code_size_ = 0;  // what the engine may use of the cache mapping
  void on_gate_indirect(Emulator &emu, uint64_t pc);
  void on_skipped_call(Emulator &emu, uint64_t pc);

  const Capture &cap_;
  TranslatedOptions opt_;
  std::unique_ptr<Emulator> emu_;
  struct HostBuffer {
    void operator()(uint8_t *p) const { free(p); }
  };
  std::unique_ptr<uint8_t, HostBuffer> arena_, code_, data_;
  std::vector<std::unique_ptr<uint8_t, HostBuffer>> percpu_;  // per CPU: self page + window
  std::vector<uint8_t *> percpu_views_;
  int64_t percpu_offset_ = 0;
  bool engine_up_ = false;
  bool set_up_ = false;
  uint64_t direct_gates_ = 0, indirect_gates_ = 0, cache_insns_ = 0;
};

}  // namespace kjit::sim
#endif
