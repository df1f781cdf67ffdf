// SPDX-License-Identifier: GPL-2.0
#include "translated_runner.h"
#include "hex_text.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "sim_shim.h"

namespace kjit::sim {
namespace {

uint8_t *host_alloc(uint64_t size) {
  // Page-aligned so the buffer can be shown to Unicorn with uc_mem_map_ptr.
  void *p = aligned_alloc(kPageSize, page_up(size));
  if (p) memset(p, 0, page_up(size));
  return static_cast<uint8_t *>(p);
}

}  // namespace

TranslatedOptions::TranslatedOptions() { kjit_engine_default_options(&engine); }

TranslatedRunner::TranslatedRunner(const Capture &cap, const TranslatedOptions &opt)
    : cap_(cap), opt_(opt), emu_(std::make_unique<Emulator>()) {
  // The emulator maps whole pages; the engine may be given less (tiny-cache
  // tests that force flushes).
  engine_code_size_ = opt_.code_size;
  opt_.code_size = page_up(opt_.code_size);
  opt_.data_size = page_up(opt_.data_size);
}

TranslatedRunner::~TranslatedRunner() {
  if (engine_up_) kjit_engine_fini();
  shim_reset();
}

bool TranslatedRunner::is_cache_address(uint64_t a) const {
  return a >= opt_.code_exec_base && a - opt_.code_exec_base < opt_.code_size;
}

bool TranslatedRunner::is_engine_address(uint64_t a) const {
  for (uint32_t cpu = 0; cpu < percpu_.size(); cpu++)
    if (a >= percpu_copy_of(cpu) - kPageSize && a - (percpu_copy_of(cpu) - kPageSize) < percpu_stride())
      return true;
  return is_cache_address(a) || (a >= opt_.data_exec_base && a - opt_.data_exec_base < opt_.data_size) ||
         shim_is_gate_address(a);
}

uint64_t TranslatedRunner::percpu_stride() const { return kPageSize + page_up(opt_.percpu_size); }
uint64_t TranslatedRunner::gs_base_of(uint32_t cpu) const { return cap_.regs.gs_base + cpu * percpu_stride(); }
uint64_t TranslatedRunner::percpu_copy_of(uint32_t cpu) const {
  return gs_base_of(cpu) + static_cast<uint64_t>(percpu_offset_);
}

// Whether [base, base+size) overlaps captured memory, the engine's areas,
// the stack or the sentinel, or wraps.
bool TranslatedRunner::collides(uint64_t base, uint64_t size) const {
  if (base + size < base) return true;
  auto overlaps = [&](uint64_t b, uint64_t n) { return base < b + n && b < base + size; };
  for (const Region &r : cap_.regions)
    if (overlaps(r.addr, r.end() - r.addr)) return true;
  const uint64_t sp = cap_.regs.gpr[KJIT_REG_RSP];
  return overlaps(opt_.code_exec_base, opt_.code_size) || overlaps(opt_.data_exec_base, opt_.data_size) ||
         overlaps(gate_base_, kGatePages * kPageSize) || overlaps(page_down(cap_.sentinel), kPageSize) ||
         overlaps(page_down(sp - opt_.stack_size), opt_.stack_size + 2 * kPageSize);
}

// One copy of the window per simulated CPU, each after a page whose last
// u64 holds that CPU's gs base (percpu_self).
std::string TranslatedRunner::setup_percpu(kjit_os_memory *mem) {
  if (!opt_.percpu_size || !opt_.cpus) return "";
  static const int64_t kCandidates[] = {0x40000000ll, -0x40000000ll, 0x7fe00000ll, -0x7fe00000ll};
  const uint64_t span = opt_.cpus * percpu_stride();
  bool found = false;
  for (int64_t d : kCandidates) {
    if (opt_.percpu_offset != kAutoPercpuOffset) d = opt_.percpu_offset;
    percpu_offset_ = d;
    if (!collides(percpu_copy_of(0) - kPageSize, span)) {
      found = true;
      break;
    }
    if (opt_.percpu_offset != kAutoPercpuOffset) break;
  }
  if (!found) return "no room for the per-CPU window near gs base " + hex(cap_.regs.gs_base);
  for (uint32_t cpu = 0; cpu < opt_.cpus; cpu++) {
    percpu_.emplace_back(host_alloc(percpu_stride()));
    uint8_t *buf = percpu_.back().get();
    if (!buf) return "out of host memory";
    const uint64_t gs = gs_base_of(cpu);
    memcpy(buf + kPageSize - 8, &gs, 8);
    percpu_views_.push_back(buf + kPageSize);
    std::string err = emu_->map_host(percpu_copy_of(cpu) - kPageSize, buf, percpu_stride(), kPermR | kPermW);
    if (!err.empty()) return "per-CPU window: " + err;
  }
  mem->percpu_offset = static_cast<uint64_t>(percpu_offset_);
  mem->percpu_size = opt_.percpu_size;
  mem->percpu_self = static_cast<uint64_t>(percpu_offset_) - 8;
  mem->percpu_host_views = percpu_views_.data();
  mem->percpu_ncpus = opt_.cpus;
  return "";
}

uint64_t TranslatedRunner::original_pc(uint64_t pc) const {
  if (!is_cache_address(pc)) return pc;
  return engine_up_ ? kjit_engine_original_pc(pc) : 0;
}

// The engine's areas (cache, data window, gates) go where the module's
// would, in the module area, and must not hide captured memory: a call
// into module code (a filesystem or binfmt module) captures code there.
// An area that collides moves to the first free slot of the module area.
std::string TranslatedRunner::place_areas() {
  constexpr uint64_t kModulesStart = 0xffffffffc0000000ull, kModulesEnd = 0xffffffffff000000ull;
  constexpr uint64_t kSlot = 16 << 20;
  std::vector<std::pair<uint64_t, uint64_t>> placed;
  gate_base_ = kGateBase;
  auto hides_capture = [&](uint64_t base, uint64_t size) {
    for (const Region &r : cap_.regions)
      if (r.addr < base + size && base < r.end()) return true;
    for (auto [b, n] : placed)
      if (b < base + size && base < b + n) return true;
    return false;
  };
  for (auto [base, size] : {std::pair{&opt_.code_exec_base, opt_.code_size},
                            std::pair{&opt_.data_exec_base, opt_.data_size},
                            std::pair{&gate_base_, kGatePages * kPageSize}}) {
    if (hides_capture(*base, size)) {
      const uint64_t wanted = *base;
      for (uint64_t at = kModulesStart; at + size <= kModulesEnd && hides_capture(*base, size); at += kSlot)
        *base = at;
      if (hides_capture(*base, size))
        return "no room for the simulator's area of " + std::to_string(size) + " bytes (wanted at " + hex(wanted) +
               ") between the captured regions";
    }
    placed.emplace_back(*base, size);
  }
  return "";
}

std::string TranslatedRunner::setup() {
  std::string err = place_areas();
  if (!err.empty()) return err;

  arena_.reset(host_alloc(opt_.arena_size));
  code_.reset(host_alloc(opt_.code_size));
  data_.reset(host_alloc(opt_.data_size));
  if (!arena_ || !code_ || !data_) return "out of host memory";

  Emulator &emu = *emu_;
  err = emu.load_capture(cap_);
  if (err.empty()) err = emu.map_host(opt_.code_exec_base, code_.get(), opt_.code_size, kPermR | kPermX);
  if (err.empty()) err = emu.map_host(opt_.data_exec_base, data_.get(), opt_.data_size, kPermR | kPermW);
  if (err.empty()) err = emu.map_sentinel(cap_.sentinel);
  if (err.empty()) err = emu.map_stack(cap_.regs.gpr[KJIT_REG_RSP], opt_.stack_size);
  if (!err.empty()) return err;

  kjit_os_memory mem{};
  mem.arena = arena_.get();
  mem.arena_size = opt_.arena_size;
  mem.code_write_view = code_.get();
  mem.code_exec_base = opt_.code_exec_base;
  mem.code_size = engine_code_size_;
  mem.data_host_view = data_.get();
  mem.data_exec_base = opt_.data_exec_base;
  mem.data_size = opt_.data_size;
  err = setup_percpu(&mem);
  if (!err.empty()) return err;

  ShimConfig cfg;
  cfg.gate_base = gate_base_;
  cfg.capture = &cap_;
  cfg.symbols = opt_.symbols;
  cfg.emulator = &emu;
  cfg.memory = mem;
  for (uint32_t cpu = 0; cpu < percpu_.size(); cpu++) cfg.percpu_exec_bases.push_back(percpu_copy_of(cpu));
  shim_configure(cfg);
  shim_set_quiet(opt_.quiet);
  err = shim_map_gates(emu);
  if (!err.empty()) return err;

  const kjit_os_kernel_facts facts = shim_kernel_facts();
  const int rc = kjit_engine_init(&mem, &facts, &opt_.engine);
  if (rc != 0) return "kjit_engine_init failed: " + std::to_string(rc);
  engine_up_ = true;
  if (opt_.plugin_init) {
    const int irc = opt_.plugin_init();
    if (irc != 0) return "plugin init failed: " + std::to_string(irc);
  }
  if (opt_.plugin) {
    const int prc = kjit_register_plugin(opt_.plugin);
    if (prc != 0) return "kjit_register_plugin failed: " + std::to_string(prc);
  }
  if (kjit_engine_add_stop_address(cap_.sentinel) != 0) return "kjit_engine_add_stop_address failed";
  // The host announces each instrumented entry, as the module does.
  kjit_engine_notify_entry(cap_.entry_pc);

  const uint64_t gd = shim_gate_direct(), gi = shim_gate_indirect();
  emu.add_code_hook(gd, gd, [this](Emulator &e, uint64_t pc, uint32_t) { on_gate_direct(e, pc); });
  emu.add_code_hook(gi, gi, [this](Emulator &e, uint64_t pc, uint32_t) { on_gate_indirect(e, pc); });
  if (facts.gate_sched)
    emu.add_code_hook(facts.gate_sched, facts.gate_sched,
                      [this](Emulator &e, uint64_t pc, uint32_t) { on_skipped_call(e, pc); });
  // The engine exits to a native function like to any code it may not
  // translate: a jump to it, with the original return address pushed.
  for (uint64_t t : opt_.native_calls) {
    if (kjit_os_may_translate(t)) return "native call " + hex(t) + " is captured code";
    if (!emu.is_mapped(t)) err = emu.map(t, 1, kPermR | kPermX);
    if (!err.empty()) return "native call " + hex(t) + ": " + err;
    emu.add_code_hook(t, t, [this](Emulator &e, uint64_t pc, uint32_t) { on_skipped_call(e, pc); });
  }
  emu.add_code_hook(opt_.code_exec_base, opt_.code_exec_base + opt_.code_size - 1,
                    [this](Emulator &, uint64_t, uint32_t) { cache_insns_++; });
  if (!emu.push(cap_.sentinel)) return "cannot push the sentinel: stack not writable";
  emu.set_write_pc_mapper([this](uint64_t pc) { return original_pc(pc); });
  return "";
}

// A CPU at a gate is not executing in the cache, and the emulated stack
// only holds original addresses: this is a quiescent point, where a retired
// epoch can be reclaimed (the kernel does it from a work item instead).
void TranslatedRunner::reclaim_if_pending() {
  if (kjit_engine_reclaim_pending()) {
    kjit_engine_reclaim();
    reclaims_++;
  }
}

// `call gate_direct; .long exit_id`: [rsp] is the stub's return address.
void TranslatedRunner::on_gate_direct(Emulator &emu, uint64_t pc) {
  direct_gates_++;
  emu.mark_protocol_write(emu.gpr(KJIT_REG_RSP));  // the stub's call
  uint64_t r;
  if (!emu.pop(&r)) return emu.fail(pc, "gate_direct: stack unreadable");
  emu.set_rip(kjit_engine_direct_exit(r));
  reclaim_if_pending();
}

// Chain miss: rcx = original target, [rsp] = stub return address, and
// [rsp+8] = the program's rcx, which the host restores and pops (an ABI
// return site's rcx is dead: the slot keeps the return address).
void TranslatedRunner::on_gate_indirect(Emulator &emu, uint64_t pc) {
  indirect_gates_++;
  const uint64_t sp = emu.gpr(KJIT_REG_RSP);
  emu.mark_protocol_write(sp);      // the stub's call
  emu.mark_engine_protocol_write(sp + 8);  // the chain's saved rcx, if it wrote one
  uint64_t r, rcx;
  if (!emu.pop(&r)) return emu.fail(pc, "gate_indirect: stack unreadable");
  const uint64_t next = kjit_engine_indirect_miss(r, emu.gpr(KJIT_REG_RCX));
  if (!emu.pop(&rcx)) return emu.fail(pc, "gate_indirect: saved rcx unreadable");
  emu.set_gpr(KJIT_REG_RCX, rcx);
  emu.set_rip(next);
  reclaim_if_pending();
}

// A translated `call __schedule`, or a call to a native function:
// [rsp] = the original return address R.  The handler stands for the call
// (the callee is not run); the task then continues at R's translation, as
// after the module's kjit_sched_return.
void TranslatedRunner::on_skipped_call(Emulator &emu, uint64_t pc) {
  if (!opt_.skipped_call)
    return emu.fail(pc, "a translated call into the scheduler or native code, and nothing to resume it");
  const uint64_t r = opt_.skipped_call(emu);
  if (!r) return;
  emu.set_rip(kjit_engine_resume(r));
  reclaim_if_pending();
}

TranslatedResult TranslatedRunner::run(uint32_t cpu) {
  TranslatedResult res;
  if (cpu >= std::max(opt_.cpus, 1u)) {
    res.error = "no simulated CPU " + std::to_string(cpu);
    return res;
  }
  if (!set_up_) {
    set_up_ = true;
    res.error = setup();
    if (!res.error.empty()) return res;
  } else {
    if (!engine_up_) {
      res.error = "the first run's setup failed";
      return res;
    }
    // Another entry: the capture's registers, a fresh sentinel on its stack.
    emu_->set_regs(cap_.regs);
    if (!emu_->push(cap_.sentinel)) {
      res.error = "cannot push the sentinel: stack not writable";
      return res;
    }
    emu_->clear_writes();
    kjit_engine_notify_entry(cap_.entry_pc);
  }
  Regs regs = emu_->regs();
  regs.gs_base = gs_base_of(cpu);
  emu_->set_regs(regs);
  res.entry_target = kjit_engine_enter(cap_.entry_pc);
  res.run = emu_->run(res.entry_target, cap_.sentinel, opt_.budget);
  if (res.run.reason == StopReason::kFault && is_cache_address(res.run.pc)) {
    const uint64_t orig = kjit_engine_original_pc(res.run.pc);
    res.run.message += " (cache pc; original " + (orig ? hex(orig) : std::string("unknown")) + ")";
  }
  res.final_regs = emu_->regs();
  res.writes = emu_->writes();
  kjit_engine_get_stats(&res.stats);
  res.cache_insns = cache_insns_;
  res.direct_gates = direct_gates_;
  res.indirect_gates = indirect_gates_;
  res.lock_errors = shim_lock_errors();
  res.log = shim_log_lines();
  return res;
}

}  // namespace kjit::sim
