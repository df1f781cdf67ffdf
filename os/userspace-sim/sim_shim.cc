// SPDX-License-Identifier: GPL-2.0
// os_shim.h for user space, over a loaded capture and an emulator.
#include "sim_shim.h"

#include <cstdio>
#include <cstring>
#include <mutex>

#include "c_functions.h"

namespace kjit::sim {
namespace {

struct ShimState {
  ShimConfig cfg;
  // Host-call gate i calls host_fns[i].fn: with the argument registers, or
  // (context) with the host's copy of the kjit_mcontext rdi points to.
  struct HostFn {
    uint64_t fn;
    bool context;
  };
  std::vector<HostFn> host_fns;
  std::vector<std::string> log;
  bool quiet = false;
  std::mutex mutex;
  bool locked = false;
  uint64_t lock_errors = 0;
  uint64_t fentry = 0;  // __fentry__, for kjit_os_c_abi_return
};

ShimState &state() {
  static ShimState s;
  return s;
}

uint64_t host_gate_base() { return state().cfg.gate_base + kPageSize; }
uint64_t host_gate_capacity() { return (kGatePages - 1) * kPageSize / kHostGateStride; }

// Plugin pointers live in the data window: translated code passes their
// exec addresses, the host function needs the host view.
uint64_t to_host(uint64_t v) {
  const ShimConfig &c = state().cfg;
  const kjit_os_memory &m = c.memory;
  if (m.data_host_view && v >= m.data_exec_base && v - m.data_exec_base < m.data_size)
    return reinterpret_cast<uint64_t>(m.data_host_view + (v - m.data_exec_base));
  for (size_t cpu = 0; cpu < c.percpu_exec_bases.size() && cpu < m.percpu_ncpus; cpu++) {
    const uint64_t base = c.percpu_exec_bases[cpu];
    if (v >= base && v - base < m.percpu_size)
      return reinterpret_cast<uint64_t>(m.percpu_host_views[cpu] + (v - base));
  }
  return v;
}

// A context call's routine reads the save area on the emulated stack: it
// gets a host copy.  The module's routines read the save area itself, and
// the registers are restored from it, so one that wrote its context would
// change the program's registers there and not here: that fails the run.
void serve_context_gate(Emulator &emu, uint64_t pc, uint64_t fn) {
  kjit_mcontext mc, before;
  if (!emu.read(emu.gpr(KJIT_REG_RDI), &mc, sizeof mc)) {
    emu.fail(pc, "context call: its context is not in emulated memory");
    return;
  }
  before = mc;
  reinterpret_cast<kjit_context_routine>(fn)(&mc);
  if (memcmp(&mc, &before, sizeof mc) != 0) emu.fail(pc, "context call: the routine wrote its context");
}

void serve_host_gate(Emulator &emu, uint64_t pc) {
  ShimState &s = state();
  const uint64_t off = pc - host_gate_base();
  if (off % kHostGateStride != 0 || off / kHostGateStride >= s.host_fns.size()) {
    char msg[96];
    snprintf(msg, sizeof msg, "call to unallocated host gate 0x%llx", static_cast<unsigned long long>(pc));
    emu.fail(pc, msg);
    return;
  }
  emu.mark_protocol_write(emu.gpr(KJIT_REG_RSP));  // the call into the gate
  const ShimState::HostFn &host = s.host_fns[off / kHostGateStride];
  if (host.context) {
    serve_context_gate(emu, pc, host.fn);
    return;
  }
  using HostFn = uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
  // The SysV argument registers; extra arguments are harmless to a callee
  // that takes fewer.
  auto fn = reinterpret_cast<HostFn>(host.fn);
  const uint64_t ret = fn(to_host(emu.gpr(KJIT_REG_RDI)), to_host(emu.gpr(KJIT_REG_RSI)),
                          to_host(emu.gpr(KJIT_REG_RDX)), to_host(emu.gpr(KJIT_REG_RCX)),
                          to_host(emu.gpr(KJIT_REG_R8)), to_host(emu.gpr(KJIT_REG_R9)));
  emu.set_gpr(KJIT_REG_RAX, ret);
  // The gate byte is `ret`: the emulator now returns to the caller.
}

// One gate per function and kind.
uint64_t host_gate_for(uint64_t fn, bool context) {
  auto &s = state();
  for (size_t i = 0; i < s.host_fns.size(); i++)
    if (s.host_fns[i].fn == fn && s.host_fns[i].context == context) return host_gate_base() + i * kHostGateStride;
  if (s.host_fns.size() >= host_gate_capacity()) return 0;
  s.host_fns.push_back({fn, context});
  return host_gate_base() + (s.host_fns.size() - 1) * kHostGateStride;
}

}  // namespace

void shim_configure(const ShimConfig &cfg) {
  ShimState &s = state();
  s.cfg = cfg;
  s.host_fns.clear();
  s.fentry = cfg.symbols ? cfg.symbols->address_of("__fentry__") : 0;
}

void shim_reset() {
  ShimState &s = state();
  s.cfg = ShimConfig{};
  s.host_fns.clear();
  s.log.clear();
  s.locked = false;
  s.lock_errors = 0;
  s.fentry = 0;
}

uint64_t shim_gate_direct() { return state().cfg.gate_base + kGateDirectOffset; }
uint64_t shim_gate_indirect() { return state().cfg.gate_base + kGateIndirectOffset; }
uint64_t shim_gate_sched() { return state().cfg.gate_base + kGateSchedOffset; }

bool shim_is_gate_address(uint64_t addr) {
  const uint64_t base = state().cfg.gate_base;
  return addr >= base && addr - base < kGatePages * kPageSize;
}

kjit_os_kernel_facts shim_kernel_facts() {
  kjit_os_kernel_facts f;
  memset(&f, 0, sizeof f);
  const SymbolTable *syms = state().cfg.symbols;
  if (syms && !syms->empty()) {
    static const char *const kRegNames[KJIT_GPR_COUNT] = {
        "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
        "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
    f.return_thunk = syms->address_of("__x86_return_thunk");
    f.fentry = syms->address_of("__fentry__");
    f.schedule_funnel = syms->address_of("__schedule");
    for (int i = 0; i < KJIT_GPR_COUNT; i++) {
      const std::string r = kRegNames[i];
      f.retpoline_thunk[i] = syms->address_of("__x86_indirect_thunk_" + r);
      f.its_thunk[i] = syms->address_of("__x86_indirect_its_thunk_" + r);
      f.jump_thunk[i] = syms->address_of("__x86_indirect_jump_thunk_" + r);
      f.call_thunk[i] = syms->address_of("__x86_indirect_call_thunk_" + r);
    }
    static const char *const kReturnThunks[] = {KJIT_RETURN_THUNK_NAMES};
    int n = 0;
    for (const char *name : kReturnThunks)
      if (uint64_t a = syms->address_of(name); a && n < KJIT_RETURN_THUNKS) f.return_thunks[n++] = a;
  }
  f.gate_direct = shim_gate_direct();
  f.gate_indirect = shim_gate_indirect();
  // As in the module: a translated call to the funnel goes through the
  // scheduler gate, which the translated runner serves (a replay resumes
  // there from the capture's RESUME record).
  if (f.schedule_funnel) f.gate_sched = shim_gate_sched();
  return f;
}

std::string shim_map_gates(Emulator &emu) {
  const uint64_t base = state().cfg.gate_base;
  std::string err = emu.map(base, kGatePages * kPageSize, kPermR | kPermX);
  if (!err.empty()) return "gate pages: " + err;
  std::vector<uint8_t> bytes(kGatePages * kPageSize, 0xc3);  // ret
  std::fill(bytes.begin(), bytes.begin() + kPageSize, 0xcc);  // int3
  emu.write(base, bytes.data(), bytes.size());
  emu.add_code_hook(host_gate_base(), base + kGatePages * kPageSize - 1,
                    [](Emulator &e, uint64_t pc, uint32_t) { serve_host_gate(e, pc); });
  return "";
}

const std::vector<std::string> &shim_log_lines() { return state().log; }
void shim_set_quiet(bool quiet) { state().quiet = quiet; }
uint64_t shim_lock_errors() { return state().lock_errors; }

}  // namespace kjit::sim

using kjit::sim::state;

extern "C" {

uint64_t kjit_os_read_code(uint64_t addr, uint8_t *out, uint64_t len) {
  const kjit::sim::Capture *cap = state().cfg.capture;
  if (!cap) return 0;
  uint64_t done = 0;
  // Adjacent executable regions read as one.
  while (done < len) {
    const kjit::sim::Region *r = cap->find_region(addr + done);
    if (!r || !(r->perms & kjit::sim::kPermX)) break;
    const uint64_t off = addr + done - r->addr;
    const uint64_t n = std::min<uint64_t>(len - done, r->bytes.size() - off);
    memcpy(out + done, r->bytes.data() + off, n);
    done += n;
  }
  return done;
}

int kjit_os_may_translate(uint64_t addr) {
  const kjit::sim::Capture *cap = state().cfg.capture;
  if (!cap) return 0;
  const kjit::sim::Region *r = cap->find_region(addr);
  return r && (r->perms & kjit::sim::kPermX);
}

int kjit_os_c_abi_return(uint64_t addr) {
  const kjit::sim::ShimConfig &c = state().cfg;
  return c.capture && c.symbols && kjit::sim::in_c_function(*c.capture, *c.symbols, state().fentry, addr);
}

// A replay runs the text of its capture, which nothing patches: the sites
// are copied as they were captured (NOPs), as before live tests existed.
int kjit_os_fentry_site(uint64_t) { return 0; }

// The simulator has no exception or bug tables yet.
enum kjit_os_site_kind kjit_os_classify_site(uint64_t, int) { return KJIT_SITE_PLAIN; }

// Nothing to mirror: faults in the simulator are reported, not fixed up.
// Captured code has no native leaves: everything executed is translated.
int kjit_os_callable_natively(uint64_t) { return 0; }
// A capture holds kernel and module text only: nothing in it is another
// tool's code.
int kjit_os_is_text(uint64_t) { return 1; }
uint64_t kjit_os_extable_fixup(uint64_t) { return 0; }
int kjit_os_mirror_extable(uint64_t, uint64_t, uint64_t) { return 1; }

void kjit_os_code_written(uint64_t exec_addr, uint64_t len) {
  if (kjit::sim::Emulator *emu = state().cfg.emulator) emu->invalidate(exec_addr, len);
}

void kjit_os_lock(void) {
  auto &s = state();
  // One engine thread: a second lock while held is an engine bug that would
  // deadlock in the kernel.  Report it instead of hanging.
  if (s.locked) {
    s.lock_errors++;
    kjit_os_log("kjit_os_lock: lock taken while already held");
    return;
  }
  s.mutex.lock();
  s.locked = true;
}

int kjit_os_trylock(void) {
  auto &s = state();
  if (s.locked || !s.mutex.try_lock()) return 0;
  s.locked = true;
  return 1;
}

void kjit_os_unlock(void) {
  auto &s = state();
  if (!s.locked) {
    s.lock_errors++;
    kjit_os_log("kjit_os_unlock: lock not held");
    return;
  }
  s.locked = false;
  s.mutex.unlock();
}

uint32_t kjit_os_cpu(void) { return 0; }

void kjit_os_quiesce(uint64_t, uint64_t) {}

void kjit_os_log(const char *msg) {
  auto &s = state();
  if (s.log.size() < 10000) s.log.emplace_back(msg ? msg : "");
  if (!s.quiet) fprintf(stderr, "kjit: %s\n", msg ? msg : "");
}

void kjit_os_symbolize(uint64_t addr, char *out, uint64_t out_len) {
  if (!out || out_len == 0) return;
  const kjit::sim::SymbolTable *syms = state().cfg.symbols;
  const std::string s = syms ? syms->symbolize(addr) : std::string();
  const size_t n = std::min<size_t>(s.size(), out_len - 1);
  memcpy(out, s.data(), n);
  out[n] = '\0';
}

uint64_t kjit_os_host_call_gate(uint64_t fn) { return kjit::sim::host_gate_for(fn, false); }
uint64_t kjit_os_host_context_gate(uint64_t fn) { return kjit::sim::host_gate_for(fn, true); }

}  // extern "C"
