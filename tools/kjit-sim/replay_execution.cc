// SPDX-License-Identifier: GPL-2.0
#include "replay_execution.h"

#include "translated_runner.h"

namespace kjit::sim {
namespace {

// The original code at the addresses it ran at, as replay.cc's original
// run sets it up.
class OriginalExecution : public ReplayExecution {
 public:
  OriginalExecution(const Capture &aug, const ReplayLog &log, uint64_t funnel)
      : aug_(aug), server_(aug, log, [](uint64_t pc) { return pc; }, false) {
    server_.set_funnel(funnel);
  }
  std::string setup(Emulator::CodeHook first_hook) {
    std::string err = emu_.load_capture(aug_);
    if (err.empty()) err = emu_.map_sentinel(aug_.sentinel);
    if (err.empty()) err = emu_.map_stack(aug_.regs.gpr[KJIT_REG_RSP], 64 * 1024);
    if (err.empty() && !emu_.push(aug_.sentinel)) err = "cannot push the sentinel";
    if (!err.empty()) return err;
    emu_.add_code_hook(1, ~uint64_t{0}, std::move(first_hook));
    server_.attach(emu_);
    return "";
  }
  Emulator &emulator() override { return emu_; }
  LogServer &server() override { return server_; }
  RunResult run(uint64_t budget) override {
    const uint64_t from = started_ ? emu_.rip() : aug_.entry_pc;
    started_ = true;
    return emu_.run(from, aug_.sentinel, budget);
  }
  uint64_t original_pc(uint64_t pc) const override { return pc; }
  bool is_engine_address(uint64_t) const override { return false; }

 private:
  const Capture &aug_;
  Emulator emu_;
  LogServer server_;
  bool started_ = false;
};

// The engine's translation, as replay.cc's translated run sets it up with
// no tool: the first run sets the engine up and enters the code cache.
class TranslatedExecution : public ReplayExecution {
 public:
  TranslatedExecution(const Capture &aug, const ReplayLog &log, const SymbolTable &syms, uint64_t budget, bool quiet)
      : aug_(aug), runner_(aug, options(syms, budget, quiet)), server_(aug, log, [this](uint64_t pc) -> uint64_t {
          if (runner_.is_cache_address(pc)) return runner_.original_pc(pc);
          if (runner_.is_engine_address(pc)) return 0;
          return pc;
        }, true) {
    runner_.set_skipped_calls([this](Emulator &emu) { return server_.resume_at_gate(emu); },
                              native_calls(log, syms.empty() ? nullptr : &syms));
  }
  void setup(Emulator::CodeHook first_hook) {
    runner_.emulator().add_code_hook(1, ~uint64_t{0}, std::move(first_hook));
    server_.attach(runner_.emulator());
  }
  Emulator &emulator() override { return runner_.emulator(); }
  LogServer &server() override { return server_; }
  RunResult run(uint64_t budget) override {
    if (started_) return runner_.emulator().run(runner_.emulator().rip(), aug_.sentinel, budget);
    started_ = true;
    TranslatedResult r = runner_.run();
    if (!r.error.empty()) return RunResult{StopReason::kError, 0, 0, 0, r.error};
    return r.run;
  }
  uint64_t original_pc(uint64_t pc) const override {
    if (runner_.is_cache_address(pc)) return runner_.original_pc(pc);
    return runner_.is_engine_address(pc) ? 0 : pc;
  }
  bool is_engine_address(uint64_t addr) const override { return runner_.is_engine_address(addr); }

 private:
  static TranslatedOptions options(const SymbolTable &syms, uint64_t budget, bool quiet) {
    TranslatedOptions to;
    to.budget = budget;
    to.symbols = syms.empty() ? nullptr : &syms;
    to.quiet = quiet;
    return to;
  }
  const Capture &aug_;
  TranslatedRunner runner_;
  LogServer server_;
  bool started_ = false;
};

}  // namespace

std::unique_ptr<ReplayExecution> start_original(const Capture &aug, const ReplayLog &log, const SymbolTable &syms,
                                                Emulator::CodeHook first_hook, std::string *err) {
  auto e = std::make_unique<OriginalExecution>(aug, log, syms.address_of("__schedule"));
  *err = e->setup(std::move(first_hook));
  if (!err->empty()) return nullptr;
  return e;
}

std::unique_ptr<ReplayExecution> start_translated(const Capture &aug, const ReplayLog &log, const SymbolTable &syms,
                                                  uint64_t budget, bool quiet, Emulator::CodeHook first_hook,
                                                  std::string *err) {
  auto e = std::make_unique<TranslatedExecution>(aug, log, syms, budget, quiet);
  e->setup(std::move(first_hook));
  err->clear();
  return e;
}

}  // namespace kjit::sim
