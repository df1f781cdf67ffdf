// SPDX-License-Identifier: GPL-2.0
// A stand-in engine for testing the simulator host without core/: it
// implements engine.h by emitting, for every entry, a stub that goes
// straight back to the host through one of the gates, which then returns
// the original pc (the escape hatch), so execution continues natively.
// That exercises the gate protocols, host-call gates and the diff runner's
// filtering of engine-made writes.  Test-only: never linked into kjit-sim.
#include "fake_engine.h"

#include <cstring>
#include <vector>

#include "kjit/engine.h"

namespace {

struct Fake {
  kjit_os_memory mem{};
  kjit_os_kernel_facts facts{};
  uint64_t used = 0;
  std::vector<uint64_t> targets;  // exit id -> original pc
  std::vector<uint64_t> stops;
  kjit_engine_stats stats{};
  const kjit_plugin *plugin = nullptr;
};
Fake g;

FakeEngineMode g_mode = FakeEngineMode::kDecline;
uint64_t g_counter_fn = 0;  // host function called on each entry, if set

void emit(std::vector<uint8_t> *c, std::initializer_list<uint8_t> b) { c->insert(c->end(), b); }
void emit_u32(std::vector<uint8_t> *c, uint32_t v) {
  for (int i = 0; i < 4; i++) c->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void emit_u64(std::vector<uint8_t> *c, uint64_t v) {
  for (int i = 0; i < 8; i++) c->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
// call rel32 from exec address `at` (of the call) to `target`.
void emit_call(std::vector<uint8_t> *c, uint64_t at, uint64_t target) {
  c->push_back(0xe8);
  emit_u32(c, static_cast<uint32_t>(target - (at + 5)));
}

}  // namespace

void fake_engine_set_mode(FakeEngineMode mode) { g_mode = mode; }
void fake_engine_set_entry_hook(uint64_t (*fn)(uint64_t *counter)) {
  g_counter_fn = reinterpret_cast<uint64_t>(fn);
}

extern "C" {

void kjit_engine_default_options(struct kjit_engine_options *opt) {
  opt->inline_instrumentation = 1;
  opt->use_liveness = 1;
  opt->max_chain_length = 4;
  opt->max_block_insns = 64;
}

int kjit_engine_init(const struct kjit_os_memory *mem, const struct kjit_os_kernel_facts *facts,
                     const struct kjit_engine_options *) {
  g = Fake{};
  g.mem = *mem;
  g.facts = *facts;
  return 0;
}

void kjit_engine_fini(void) { g = Fake{}; }

uint64_t kjit_engine_enter(uint64_t pc) {
  if (g_mode == FakeEngineMode::kDecline || !kjit_os_may_translate(pc)) return pc;
  for (uint64_t s : g.stops)
    if (s == pc) return pc;
  const uint64_t start = g.mem.code_exec_base + g.used;
  std::vector<uint8_t> c;
  if (g_counter_fn) {
    // push rax; push rdi; mov rdi, <counter exec addr>; call gate(fn); pop rdi; pop rax
    const uint64_t gate = kjit_os_host_call_gate(g_counter_fn);
    emit(&c, {0x50, 0x57, 0x48, 0xbf});
    emit_u64(&c, g.mem.data_exec_base);  // the counter lives at the start of the data window
    emit_call(&c, start + c.size(), gate);
    emit(&c, {0x5f, 0x58});
  }
  const uint32_t id = static_cast<uint32_t>(g.targets.size());
  g.targets.push_back(pc);
  if (g_mode == FakeEngineMode::kDirectExit) {
    emit_call(&c, start + c.size(), g.facts.gate_direct);
    emit_u32(&c, id);
  } else {
    // The chain protocol: push rcx; mov rcx, target; call gate_indirect; .long id
    emit(&c, {0x51, 0x48, 0xb9});
    emit_u64(&c, pc);
    emit_call(&c, start + c.size(), g.facts.gate_indirect);
    emit_u32(&c, id);
  }
  memcpy(g.mem.code_write_view + g.used, c.data(), c.size());
  g.used += c.size();
  kjit_os_code_written(start, c.size());
  g.stats.blocks_built++;
  g.stats.cache_bytes_used = g.used;
  return start;
}

static uint32_t exit_id(uint64_t stub_return) {
  uint32_t id;
  memcpy(&id, g.mem.code_write_view + (stub_return - g.mem.code_exec_base), 4);
  return id;
}

uint64_t kjit_engine_resume(uint64_t pc) { return pc; }  // never translates a return

uint64_t kjit_engine_direct_exit(uint64_t r) {
  g.stats.dispatcher_exits++;
  return g.targets.at(exit_id(r));
}

uint64_t kjit_engine_indirect_miss(uint64_t r, uint64_t target) {
  g.stats.indirect_misses++;
  // The fake's only indirect "site" is the entry stub: the target must be
  // the pc recorded for its id, or the host broke the protocol.
  return target == g.targets.at(exit_id(r)) ? target : 0;
}

int kjit_engine_is_cache_address(uint64_t a) {
  return a >= g.mem.code_exec_base && a - g.mem.code_exec_base < g.mem.code_size;
}

int kjit_engine_add_stop_address(uint64_t pc) {
  g.stops.push_back(pc);
  return 0;
}

int kjit_engine_flush(void) { return 0; }
int kjit_engine_reclaim_pending(void) { return 0; }
int kjit_engine_reclaim(void) { return 0; }
void kjit_engine_notify_entry(uint64_t) {}
void kjit_engine_notify_exit(uint64_t) {}
uint64_t kjit_engine_original_pc(uint64_t) { return 0; }  // everything is stub code
void kjit_engine_get_stats(struct kjit_engine_stats *out) { *out = g.stats; }
int kjit_engine_build_only(uint64_t, uint64_t *, uint32_t *nsucc, uint32_t *ninsns) {
  *nsucc = 0;
  *ninsns = 0;
  return -1;
}

int kjit_register_plugin(const struct kjit_plugin *p) {
  g.plugin = p;
  return 0;
}
int kjit_unregister_plugin(const struct kjit_plugin *) {
  g.plugin = nullptr;
  return 0;
}

}  // extern "C"
