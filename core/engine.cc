// SPDX-License-Identifier: GPL-2.0
// The engine API (include/kjit/engine.h): init, entry, the dispatcher's
// direct exits and indirect misses, flush and reclaim of the code cache,
// original-pc map, stats.  The hosts' gates call these with the engine lock
// free.
#include "arch/arch.h"
#include "core/build_context.h"
#include "core/decode_cache.h"
#include "core/departures.h"
#include "core/engine_state.h"
#include "core/ibl.h"
#include "core/indirect_chain.h"
#include "core/linker.h"
#include "core/trace.h"
#include "core/retire.h"
#include "core/liveness.h"

namespace kjit {

// constinit: the core must not need a global constructor (kernel module).
constinit EngineState g_engine{};

namespace {

// Resets a free epoch for reuse: the plugins first hear that what it held
// is gone (kjit_plugin::on_cache_reset).
bool reset_epoch_locked(Epoch &e) {
  EngineState &g = g_engine;
  const int32_t cpu = g.callback_cpu;
  g.callback_cpu = static_cast<int32_t>(kjit_os_cpu());
  for (uint32_t p = 0; p < g.nplugins; p++)
    if (g.plugins[p]->on_cache_reset) g.plugins[p]->on_cache_reset(e.index, g.plugins[p]->arg);
  g.callback_cpu = cpu;
  return e.reset();
}

// Moves translation to the other epoch if it is free; the full one retires
// and is reclaimed once the host has quiesced (kjit_engine_flush).
bool switch_epoch_locked() {
  EngineState &g = g_engine;
  Epoch &other = g.epochs[g.current ^ 1];
  if (other.state != EpochState::kFree) return false;
  if (!reset_epoch_locked(other)) return false;
  // Retired before the switch: a lock-free reader (kjit_engine_enter) that
  // sees the old half still current sees it retired.
  g.epoch().store_state(EpochState::kRetired);
  __atomic_store_n(&g.current, g.current ^ 1, __ATOMIC_RELEASE);
  other.store_state(EpochState::kActive);
  g.reclaim_pending = 1;
  g.stats.flushes++;
  return true;
}

// An active epoch to translate into: the current one, or after a retire
// (kjit_engine_retire) a free half made active.  False while both halves
// wait for their reclaim.
bool ensure_active_locked() {
  EngineState &g = g_engine;
  Epoch &e = g.epoch();
  if (e.state == EpochState::kActive) return true;
  if (e.state == EpochState::kFree) {
    if (!reset_epoch_locked(e)) return false;
    e.store_state(EpochState::kActive);
    return true;
  }
  return switch_epoch_locked();
}

// The translation of `pc` in the active epoch (the one active when it
// returns, after a switch too), built if needed; nullptr when `pc` must run
// natively.
// `*why` says why when it returns nullptr.
Block *lookup_or_build_locked(uint64_t pc, bool routine_start, kjit_departure *why) {
  EngineState &g = g_engine;
  if (g.is_stop(pc) || !kjit_os_may_translate(pc)) {
    *why = departure_for_native_target(pc);
    return nullptr;
  }
  for (int attempt = 0; attempt < 2; attempt++) {
    if (!ensure_active_locked()) {
      g.stats.fallbacks++;
      *why = KJIT_DEPART_CACHE_FULL;
      return nullptr;  // native until the host reclaims memory
    }
    Epoch &e = g.epoch();
    if (Block *b = e.table.find(pc)) return b;
    Block *b = nullptr;
    switch (build_block(e, pc, routine_start, &b)) {
      case BuildResult::kBuilt:
        // Not put in the IBL table here: only entries and indirect targets
        // go there (below), so blocks only reached directly do not crowd
        // out the ones the table is for.
        return b;
      case BuildResult::kDeclined:
        g.stats.fallbacks++;
        *why = KJIT_DEPART_DECLINED;
        return nullptr;
      case BuildResult::kHooked:
        *why = KJIT_DEPART_HOOKED;
        return nullptr;
      case BuildResult::kCacheFull:
        g.stats.cache_full++;
        if (!switch_epoch_locked()) {
          g.stats.fallbacks++;
          *why = KJIT_DEPART_CACHE_FULL;
          return nullptr;  // native until the host reclaims memory
        }
        break;
    }
  }
  *why = KJIT_DEPART_CACHE_FULL;
  return nullptr;
}

// The copy of an exit's target made for the return address it knows
// (Exit::call_return, build_call_copy), or nullptr: it knows none, or the
// copy cannot be built now (the shared translation serves it, which a
// full cache half also needs).
Block *call_copy_locked(Epoch &e, const Exit *exit) {
  EngineState &g = g_engine;
  if (!exit->call_return || g.is_stop(exit->target_pc) || !kjit_os_may_translate(exit->target_pc)) return nullptr;
  if (Block *b = e.find_copy(exit->target_pc, exit->call_return)) return b;
  Block *b = nullptr;
  return build_call_copy(e, exit->target_pc, exit->is_call, exit->call_return, &b) == BuildResult::kBuilt ? b
                                                                                                           : nullptr;
}

// Whether every return to a stop address must reach the host's gate.
bool exits_observed() {
  const EngineState &g = g_engine;
  if (g.opt.observe_exits) return true;
  for (uint32_t i = 0; i < g.nplugins; i++)
    if (g.plugins[i]->on_exit) return true;
  return false;
}

Epoch *epoch_of_exec(uint64_t exec) {
  for (Epoch &e : g_engine.epochs)
    if (e.state != EpochState::kFree && e.contains_exec(exec)) return &e;
  return nullptr;
}

// Whether no arithmetic flag is live at `target`, where a return link of
// `site` returns natively: the link then counts without saving them.  The
// code that says so is indexed with the site's trace, which a change to it
// retires (kjit_engine_retire_range).
bool flags_dead_at(Epoch &e, const ChainSite *site, uint64_t target) {
  TraceSources read;
  read.clear();
  TraceSources *outer = g_trace_sources;
  g_trace_sources = &read;
  const bool dead = !(live_in_at(g_engine.decoder, target).flags & x86::kAllArithFlags);
  g_trace_sources = outer;
  Block *trace = site->owner ? site->owner->trace : nullptr;
  if (!trace) return false;
  for (uint32_t i = 0; i < read.n; i++) e.sources.add(read.r[i].lo, read.r[i].hi, trace);
  return dead;
}

uint32_t read_stub_id(const Epoch &e, uint64_t stub_return) {
  uint32_t id;
  __builtin_memcpy(&id, e.write_at(static_cast<uint32_t>(stub_return - e.code_exec)), 4);
  return id;
}

}  // namespace
}  // namespace kjit

using namespace kjit;

extern "C" {

void kjit_engine_default_options(kjit_engine_options *opt) {
  opt->inline_instrumentation = 1;
  opt->use_liveness = 1;
  opt->max_chain_length = 4;
  opt->max_block_insns = 64;
  opt->observe_exits = 0;
  opt->max_trace_blocks = 8;
  opt->abi_returns = 1;
}

int kjit_engine_init(const kjit_os_memory *mem, const kjit_os_kernel_facts *facts,
                     const kjit_engine_options *opt) {
  EngineState &g = g_engine;
  if (!mem || !facts || !mem->arena || !mem->code_write_view || mem->code_size < 1024 ||
      mem->code_size > 0x40000000ull || mem->arena_size < 65536)
    return -22;  // -EINVAL
  // A per-CPU window needs CPU 0's copy: plugins hold pointers into it.
  if (mem->percpu_size && (!mem->percpu_host_views || !mem->percpu_ncpus || !mem->percpu_host_views[0]))
    return -22;
  __builtin_memset(static_cast<void *>(&g), 0, sizeof(g));
  g.mem = *mem;
  g.facts = *facts;
  if (opt) g.opt = *opt;
  else kjit_engine_default_options(&g.opt);
  g.decoder.init(facts);
  forget_decodes();
  g.callback_cpu = -1;
  uint64_t half_arena = mem->arena_size / 2, half_code = (mem->code_size / 2) & ~15ull;
  for (uint8_t i = 0; i < 2; i++) {
    Epoch &e = g.epochs[i];
    e.index = i;
    e.arena.init(mem->arena + i * half_arena, half_arena);
    e.code_write = mem->code_write_view + i * half_code;
    e.code_exec = mem->code_exec_base + i * half_code;
    e.code_size = static_cast<uint32_t>(half_code);
    e.state = EpochState::kFree;
  }
  if (!g.epochs[0].reset()) return -12;  // -ENOMEM
  departures_init();  // without room for the counts, nothing is counted
  g.epochs[0].state = EpochState::kActive;
  g.current = 0;
  g.initialized = true;
  return 0;
}

void kjit_engine_fini(void) { g_engine.initialized = false; }

uint64_t kjit_engine_enter(uint64_t orig_pc) {
  EngineState &g = g_engine;
  if (!g.initialized) return orig_pc;
  // Fast path without the lock: the active epoch's IBL table.  An epoch is
  // reset only after quiescence, which the caller (not yet in the cache,
  // not sleeping) holds off.
  // A retired epoch's table is not searched: nothing enters it after
  // kjit_engine_retire returned.
  const Epoch &cur = g.epochs[__atomic_load_n(&g.current, __ATOMIC_ACQUIRE) & 1];
  uint64_t d = cur.load_state() == EpochState::kActive ? ibl_lookup(cur, orig_pc) : 0;
  if (d) {
    __atomic_fetch_add(&g.stats.fast_entries, 1, __ATOMIC_RELAXED);  // lock-free path
    count_entry();
    return d;
  }
  // Both halves retired (text changes, a full cache) until a reclaim frees
  // one, which takes a grace period: nothing can be translated, and every
  // entry of every attached function would otherwise queue on the lock.
  if (cur.load_state() == EpochState::kRetired &&
      g.epochs[(&cur - g.epochs) ^ 1].load_state() == EpochState::kRetired) {
    count_entry_declined(KJIT_DEPART_CACHE_FULL);
    return orig_pc;
  }
  EngineLock lock;
  kjit_departure why;
  Block *b = lookup_or_build_locked(orig_pc, true, &why);
  if (!b) {
    count_entry_declined(why);
    return orig_pc;
  }
  ibl_insert(g.epoch(), orig_pc, b->exec);
  count_entry();
  return b->exec;
}

uint64_t kjit_engine_resume(uint64_t orig_pc) {
  EngineState &g = g_engine;
  if (!g.initialized) return orig_pc;
  const Epoch &cur = g.epochs[__atomic_load_n(&g.current, __ATOMIC_ACQUIRE) & 1];
  if (uint64_t d = cur.load_state() == EpochState::kActive ? ibl_lookup(cur, orig_pc) : 0)
    return d;  // a native target's IBL entry is a trampoline that counts
  EngineLock lock;
  kjit_departure why;
  Block *b = lookup_or_build_locked(orig_pc, false, &why);
  if (!b) {
    count_departure(orig_pc, why);
    return orig_pc;
  }
  ibl_insert(g.epoch(), orig_pc, b->exec);
  return b->exec;
}

uint64_t kjit_engine_direct_exit(uint64_t stub_return) {
  EngineState &g = g_engine;
  EngineLock lock;
  g.stats.dispatcher_exits++;
  Epoch *from = epoch_of_exec(stub_return);
  if (!from) return 0;  // not ours: a host bug; 0 makes it loud
  auto *exit = static_cast<Exit *>(from->record_of(read_stub_id(*from, stub_return)));
  uint64_t target = exit->target_pc;
  kjit_departure why;
  if (exit->native_why) {
    why = static_cast<kjit_departure>(exit->native_why - 1);
    count_departure(target, why);
    if (from == &g.epoch()) link_exit_native(*from, exit, why);
    return target;
  }
  Block *b = from == &g.epoch() ? call_copy_locked(*from, exit) : nullptr;
  if (!b) b = lookup_or_build_locked(target, exit->is_call, &why);
  if (!b) {
    count_departure(target, why);
    return target;
  }
  // Only the active epoch is linked; a retired one just gets served.
  if (from == &g.epoch()) {
    link_exit(*from, exit, b);
    // A forwarder's target is found by the IBL again: without the jump.
    if (exit->forwards) ibl_redirect(*from, target, from->exec_at(exit->field_offset - 1), b->exec);
  }
  return b->exec;
}

uint64_t kjit_engine_indirect_miss(uint64_t stub_return, uint64_t target) {
  EngineState &g = g_engine;
  EngineLock lock;
  g.stats.indirect_misses++;
  Epoch *from = epoch_of_exec(stub_return);
  if (!from) return 0;
  auto *site = static_cast<ChainSite *>(from->record_of(read_stub_id(*from, stub_return)));
  kjit_departure why = KJIT_DEPART_COMPLETED;
  Block *b = lookup_or_build_locked(target, site->is_call, &why);
  if (!b) count_departure(target, why);
  // Only the active epoch is extended.  A native target is linked only when
  // it is native for good (stop address, untranslatable), not when the
  // engine declined because the cache is full; through a trampoline that
  // counts the departure.  A return site's link returns natively itself and
  // counts, saving RFLAGS only where liveness says they may be read after
  // the return.  Only a target the chain has no link for (a full chain)
  // goes into the IBL, whose slots the busiest sites need; its entry serves
  // every kind of site, so its trampoline keeps the flags.
  bool stop = g.is_stop(target);
  // Never a link to code that is not text (kjit_os_is_text): another
  // tool's code is served natively here each time.
  bool native_for_good = !b && (stop || (!kjit_os_may_translate(target) && kjit_os_is_text(target))) &&
                         !(stop && exits_observed());
  if (from == &g.epoch() && (b || native_for_good)) {
    bool linked = site->is_return
                      ? return_link_append(*from, site, target, b, why, !b && flags_dead_at(*from, site, target))
                      : chain_append(*from, site, target, b, b ? 0 : native_exit_trampoline(*from, target, why, true));
    if (!linked) ibl_insert(*from, target, b ? b->exec : native_exit_trampoline(*from, target, why, true));
  }
  chain_skip_to_ibl(*from, site);
  return b ? b->exec : target;
}

int kjit_engine_is_cache_address(uint64_t addr) {
  const kjit_os_memory &m = g_engine.mem;
  return addr >= m.code_exec_base && addr < m.code_exec_base + m.code_size;
}

int kjit_engine_epoch_range(uint32_t i, uint64_t *lo, uint64_t *hi) {
  const EngineState &g = g_engine;
  if (!g.initialized || i >= 2) return 0;
  *lo = g.epochs[i].code_exec;
  *hi = g.epochs[i].code_exec + g.epochs[i].code_size;
  return 1;
}

int kjit_engine_add_stop_address(uint64_t orig_pc) {
  EngineState &g = g_engine;
  // Asked on every entry from a new call site: once full, without the lock.
  if (g.stops.full() && !g.stops.contains(orig_pc)) return -28;  // -ENOSPC
  EngineLock lock;
  return g.stops.insert(orig_pc) ? 0 : -28;  // -ENOSPC
}

int kjit_engine_is_stop_address(uint64_t orig_pc) { return g_engine.stops.contains(orig_pc); }

int kjit_engine_reclaim(void) {
  EngineState &g = g_engine;
  if (!g.initialized) return 0;
  // Nobody can enter a retired epoch any more; wait until nobody is in it.
  // Only the epochs seen retired (and so quiesced) here are freed: one
  // retired after this check waits for the next reclaim.
  bool quiesced[2] = {false, false};
  {
    EngineLock lock;
    for (Epoch &e : g.epochs) quiesced[e.index] = e.state == EpochState::kRetired;
  }
  for (Epoch &e : g.epochs)
    if (quiesced[e.index]) kjit_os_quiesce(e.code_exec, e.code_exec + e.code_size);
  EngineLock lock;
  for (Epoch &e : g.epochs)
    if (quiesced[e.index] && e.state == EpochState::kRetired) e.state = EpochState::kFree;
  g.reclaim_pending = 0;
  for (Epoch &e : g.epochs)
    if (e.state == EpochState::kRetired) g.reclaim_pending = 1;
  return 0;
}

int kjit_engine_flush(void) {
  EngineState &g = g_engine;
  if (!g.initialized) return 0;
  bool switched;
  {
    EngineLock lock;
    switched = switch_epoch_locked();
  }
  if (!switched) {
    // The other half is still retired from an earlier switch: reclaim it
    // first, then retire the active one.
    kjit_engine_reclaim();
    EngineLock lock;
    switch_epoch_locked();
  }
  return kjit_engine_reclaim();
}

int kjit_engine_retire(void) {
  EngineState &g = g_engine;
  if (!g.initialized) return 0;
  EngineLock lock;
  Epoch &e = g.epoch();
  if (e.state != EpochState::kActive || e.generation_empty()) return 0;
  if (switch_epoch_locked()) return 1;
  // The other half still waits for its reclaim: a new generation here, or
  // failing that (no room left) nothing translated until the reclaim
  // (ensure_active_locked).
  g.stats.flushes++;
  if (e.renew()) {
    g.stats.generations++;
    return 1;
  }
  e.store_state(EpochState::kRetired);
  g.reclaim_pending = 1;
  return 1;
}

int kjit_engine_retire_range(uint64_t addr, uint64_t len) {
  EngineState &g = g_engine;
  if (!g.initialized || len == 0) return 0;
  EngineLock lock;
  // Memoised live-ins may describe the old code, even where no trace came
  // of them (a build given up); decodes are checked against the bytes they
  // came from.
  forget_liveness();
  Epoch &e = g.epoch();
  if (e.state != EpochState::kActive || e.generation_empty()) return 0;
  return retire_readers_locked(e, addr, len);
}

int kjit_engine_reclaim_pending(void) { return g_engine.reclaim_pending; }

static uint64_t original_pc_locked(uint64_t cache_pc) {
  Epoch *e = epoch_of_exec(cache_pc);
  if (!e) return 0;
  Block *b = e->block_containing(cache_pc);
  if (!b || b->npcmap == 0) return 0;
  uint32_t off = static_cast<uint32_t>(cache_pc - b->exec);
  for (uint32_t i = 0; i < b->npcmap; i++) {
    const PcMapEntry &m = b->pcmap[i];
    if (off >= m.cache_offset && off < m.cache_offset + m.length) return b->orig_pc + m.pc_delta;
  }
  return 0;  // code the engine added
}

uint64_t kjit_engine_original_pc(uint64_t cache_pc) {
  EngineLock lock;
  return original_pc_locked(cache_pc);
}

uint64_t kjit_engine_original_pc_nowait(uint64_t cache_pc) {
  if (!kjit_os_trylock()) return 0;
  uint64_t orig = original_pc_locked(cache_pc);
  kjit_os_unlock();
  return orig;
}

int kjit_engine_code_names_value(uint64_t start, uint64_t len, uint64_t value) {
  // A decoder of its own: the engine's may not exist yet, and this one
  // needs no kernel facts (it classifies nothing).
  x86::Decoder decoder;
  decoder.init(nullptr);
  for (uint64_t at = start; at < start + len;) {
    uint8_t buf[15];
    uint64_t got = kjit_os_read_code(at, buf, sizeof(buf));
    uint32_t length = 0;
    if (got == 0) return 0;
    if (decoder.names_value(at, buf, static_cast<uint32_t>(got), value, &length)) return 1;
    if (length == 0) return 0;
    at += length;
  }
  return 0;
}

// Entry/exit notifications go to every registered plugin.  The list is
// copied under the lock; callbacks run without it (they may allocate).
static void notify(uint64_t pc, bool entry) {
  EngineState &g = g_engine;
  const kjit_plugin *list[kMaxPlugins];
  uint32_t n;
  if (!__atomic_load_n(entry ? &g.entry_callbacks : &g.exit_callbacks, __ATOMIC_ACQUIRE)) return;
  {
    EngineLock lock;
    n = g.nplugins;
    for (uint32_t i = 0; i < n; i++) list[i] = g.plugins[i];
  }
  for (uint32_t i = 0; i < n; i++) {
    auto cb = entry ? list[i]->on_entry : list[i]->on_exit;
    if (cb) cb(pc, list[i]->arg);
  }
}
void kjit_engine_notify_entry(uint64_t entry_pc) { notify(entry_pc, true); }
int kjit_engine_has_entry_callbacks(void) {
  return __atomic_load_n(&g_engine.entry_callbacks, __ATOMIC_ACQUIRE) != 0;
}
void kjit_engine_notify_exit(uint64_t entry_pc) { notify(entry_pc, false); }

void kjit_engine_get_stats(kjit_engine_stats *out) {
  EngineState &g = g_engine;
  EngineLock lock;
  *out = g.stats;
  out->stop_addresses = g.stops.size();
  const DecodeCacheStats d = decode_cache_stats();
  out->decoded_by_address = d.by_address;
  out->decoded_by_encoding = d.by_encoding;
  out->decoded_relocated = d.relocated;
  out->decoded = d.decoded;
  out->cache_bytes_used = 0;
  out->arena_bytes_used = 0;
  for (Epoch &e : g.epochs) {
    if (e.state == EpochState::kFree) continue;
    out->cache_bytes_used += e.code_used;
    out->arena_bytes_used += e.arena.used();
  }
}

int kjit_engine_build_only(uint64_t orig_pc, uint64_t *succ, uint32_t *nsucc, uint32_t *ninsns) {
  EngineState &g = g_engine;
  EngineLock lock;
  *nsucc = 0;
  *ninsns = 0;
  Block *b = g.epoch().table.find(orig_pc);
  if (!b) {
    // One block, so that g_build holds its decode afterwards.
    uint32_t trace = g.opt.max_trace_blocks;
    g.opt.max_trace_blocks = 1;
    kjit_departure why;
    b = lookup_or_build_locked(orig_pc, false, &why);
    g.opt.max_trace_blocks = trace;
    if (!b) return -1;
  } else if (!decode_block(orig_pc)) {
    return -1;
  }
  // Successors come from the builder's decode of this block (g_build).
  const BuildContext &ctx = g_build;
  *ninsns = ctx.n;
  const x86::Insn &last = ctx.insns[ctx.n - 1].insn;
  if (!ctx.has_terminator()) {
    if (ctx.early == EarlyEnd::kContinue) succ[(*nsucc)++] = ctx.next_pc;
    return ctx.ends_native() ? 1 : 0;
  }
  switch (last.cf) {
    case KJIT_CF_JCC:
      succ[(*nsucc)++] = last.target;
      succ[(*nsucc)++] = ctx.next_pc;
      break;
    case KJIT_CF_JMP:
      succ[(*nsucc)++] = last.target;
      break;
    case KJIT_CF_CALL:
    case KJIT_CF_FENTRY:
    case KJIT_CF_CALL_INDIRECT:
      succ[(*nsucc)++] = ctx.next_pc;  // the return site; callees are other functions
      break;
    default:
      break;
  }
  return 0;
}

}  // extern "C"
