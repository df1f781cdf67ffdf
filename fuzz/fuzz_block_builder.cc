// SPDX-License-Identifier: GPL-2.0
// fuzz_block_builder: the engine alone (no emulator) over arbitrary bytes
// placed as kernel text at 0xffffffff81000000.  This file is the OS shim
// (include/kjit/os_shim.h) for this target: code comes from the input, gates
// and host-call gates are fake high addresses, and the shim checks the
// engine's side of the contract (lock pairing, code_written ranges).
//
// Per input: kjit_engine_init with a small cache, optionally one example
// plugin (chosen by an input byte), then rounds of kjit_engine_enter /
// kjit_engine_build_only at input-chosen offsets, kjit_engine_direct_exit
// and kjit_engine_indirect_miss on stubs found in the engine's own output,
// and kjit_engine_flush between rounds.  The engine must not crash, trip a
// sanitizer, or touch memory outside its arena/code/data buffers (they are
// exact-size heap blocks, so ASan sees any overflow).
//
// Input layout: [0..15] control bytes, [16..] code bytes.
#include <Zydis/Zydis.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kjit/engine.h"
#include "kjit_examples.h"

namespace {

constexpr uint64_t kTextBase = 0xffffffff81000000ull;
constexpr uint64_t kCodeExec = 0xffffffffc0000000ull;
constexpr uint64_t kDataExec = 0xffffffffd0000000ull;
constexpr uint64_t kGateDirect = 0xffffffffe0000000ull;
constexpr uint64_t kGateIndirect = 0xffffffffe0000010ull;
constexpr uint64_t kHostCallGate = 0xffffffffe0001000ull;
constexpr uint64_t kCodeSize = 64 << 10, kArenaSize = 512 << 10, kDataSize = 64 << 10;

[[noreturn]] void fail(const char *what, uint64_t a = 0, uint64_t b = 0) {
  fprintf(stderr, "fuzz_block_builder: %s (0x%llx, 0x%llx)\n", what, static_cast<unsigned long long>(a),
          static_cast<unsigned long long>(b));
  __builtin_trap();
}

// The "kernel text" of the current input and the shim's per-input state.
struct ShimState {
  const uint8_t *text = nullptr;
  uint64_t text_size = 0;
  uint8_t site_seed = 0;     // which instruction addresses are extable/bug sites
  bool mirror_ok = true;     // kjit_os_mirror_extable answer
  int lock_depth = 0;
} g_shim;

// A small byte stream over the control bytes and, once they run out, the
// code bytes again (deterministic for a given input).
struct Stream {
  const uint8_t *p;
  size_t n, i = 0;
  uint8_t byte() { return n ? p[i++ % n] : 0; }
  uint32_t u16() { return byte() | (static_cast<uint32_t>(byte()) << 8); }
};

// Direct-exit stubs (`call gate_direct; .long id`) and chain-miss stubs found
// by decoding a translated block from its start.  Stub return addresses stay
// valid until the next kjit_engine_flush (the epoch may be retired by a
// cache-full switch, but it is served until a flush reclaims it).
struct Stubs {
  std::vector<uint64_t> direct, indirect;
  std::vector<uint64_t> scanned;
  void clear() { direct.clear(); indirect.clear(); scanned.clear(); }
};

ZydisDecoder g_zydis;

// True when `exec` holds `call gate_direct/gate_indirect` (then *gate says which).
bool is_stub_at(const uint8_t *code, uint64_t exec, uint64_t *gate) {
  if (exec < kCodeExec || exec - kCodeExec + 9 > kCodeSize) return false;
  const uint64_t off = exec - kCodeExec;
  if (code[off] != 0xe8) return false;
  int32_t rel;
  memcpy(&rel, code + off + 1, 4);
  *gate = exec + 5 + static_cast<int64_t>(rel);
  return *gate == kGateDirect || *gate == kGateIndirect;
}

// Finds the stubs of the block translated at `exec`.  The body is decoded
// linearly up to its first unconditional transfer (so decoding never runs
// past the block into stale cache bytes), and the targets of its direct
// jumps are followed: an exit's rel32 points at its own stub until it is
// linked.  Stubs are never searched for by pattern in raw memory: a stale
// stub of a flushed epoch would carry an id that is no longer valid.
void scan_block(const uint8_t *code, uint64_t exec, Stubs *s) {
  if (!kjit_engine_is_cache_address(exec)) return;
  for (uint64_t e : s->scanned)
    if (e == exec) return;
  s->scanned.push_back(exec);
  uint64_t pc = exec;
  for (int steps = 0; steps < 512 && pc - kCodeExec < kCodeSize; steps++) {
    const uint64_t off = pc - kCodeExec;
    ZydisDecodedInstruction zi;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&g_zydis, code + off, kCodeSize - off, &zi, ops))) return;
    const bool branch = zi.meta.category == ZYDIS_CATEGORY_COND_BR || zi.meta.category == ZYDIS_CATEGORY_UNCOND_BR;
    if (branch && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
      ZyanU64 target = 0;
      uint64_t gate = 0;
      if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &ops[0], pc, &target)) && is_stub_at(code, target, &gate)) {
        auto &v = gate == kGateDirect ? s->direct : s->indirect;
        bool known = false;
        for (uint64_t r : v) known |= r == target + 5;
        if (!known) v.push_back(target + 5);
        if (getenv("KJIT_FUZZ_DEBUG"))
          fprintf(stderr, "stub %s at 0x%llx (block 0x%llx)\n", gate == kGateDirect ? "direct" : "indirect",
                  (unsigned long long)(target + 5), (unsigned long long)exec);
      }
    }
    if (zi.meta.category == ZYDIS_CATEGORY_UNCOND_BR || zi.meta.category == ZYDIS_CATEGORY_RET) return;
    uint64_t gate;
    if (is_stub_at(code, pc, &gate)) return;  // reached the stubs
    pc += zi.length;
  }
}

void check_stats() {
  kjit_engine_stats st;
  kjit_engine_get_stats(&st);
  if (st.cache_bytes_used > kCodeSize) fail("cache_bytes_used beyond the code cache", st.cache_bytes_used);
  if (st.arena_bytes_used > kArenaSize) fail("arena_bytes_used beyond the arena", st.arena_bytes_used);
}

// What the engine returned for a jump into translated code or native code.
void check_target(uint64_t t, const char *what) {
  if (t == 0) fail(what);  // 0 means "not ours": a host bug by contract, never for our stubs
  if (kjit_engine_is_cache_address(t)) {
    const uint64_t orig = kjit_engine_original_pc(t);
    if (orig != 0 && (orig < kTextBase || orig >= kTextBase + g_shim.text_size)) fail("original_pc outside text", t, orig);
  }
}

struct Plugin {
  int (*init)();
  const kjit_plugin *(*get)();
};
const Plugin kPlugins[] = {
    {[] { return kjit_icount_init(); }, kjit_example_icount},
    {[] { return kjit_bbcount_init(64); }, kjit_example_bbcount},
    {[] { return kjit_calltrace_init(64); }, kjit_example_calltrace},
    {[] { return kjit_branch_hints_init(); }, kjit_example_branch_hints},
    {[] { return kjit_lock_contention_init(); }, kjit_example_lock_contention},
    {[] { return kjit_entry_count_init(64); }, kjit_example_entry_count},
};
constexpr unsigned kNumPlugins = sizeof(kPlugins) / sizeof(kPlugins[0]);

}  // namespace

// ---- The OS shim ----------------------------------------------------------
extern "C" {

uint64_t kjit_os_read_code(uint64_t addr, uint8_t *out, uint64_t len) {
  if (addr < kTextBase || addr - kTextBase >= g_shim.text_size) return 0;
  uint64_t off = addr - kTextBase, n = g_shim.text_size - off;
  if (n > len) n = len;
  memcpy(out, g_shim.text + off, n);
  return n;
}

int kjit_os_may_translate(uint64_t addr) { return addr >= kTextBase && addr - kTextBase < g_shim.text_size; }

enum kjit_os_site_kind kjit_os_classify_site(uint64_t addr, int) {
  if (!g_shim.site_seed) return KJIT_SITE_PLAIN;
  const uint64_t h = (addr * 0x9e3779b97f4a7c15ull) >> 56;
  if (h == g_shim.site_seed) return KJIT_SITE_EXTABLE;
  if (h == static_cast<uint8_t>(g_shim.site_seed + 1)) return KJIT_SITE_BUG;
  return KJIT_SITE_PLAIN;
}

int kjit_os_callable_natively(uint64_t) { return 0; }
// For a quarter of the seeds every block start is an fentry site: its
// bytes, whatever they are, become a NOP and a test of the live byte.
int kjit_os_fentry_site(uint64_t addr) { return ((g_shim.site_seed >> 4) & 3) == 3 && kjit_os_may_translate(addr); }
// For half the seeds, everything outside the fuzzed text is another tool's
// code (a trampoline): branches there must run natively.
int kjit_os_is_text(uint64_t addr) { return kjit_os_may_translate(addr) || !((g_shim.site_seed >> 3) & 1); }

// Half the seeds build every `ret` as a C function's (ABI return sites).
int kjit_os_c_abi_return(uint64_t) { return (g_shim.site_seed >> 2) & 1; }
// The fixup: the site itself (a retry loop) for half the seeds, none for
// the others; a refused mirror is refused for now or for good by seed.
uint64_t kjit_os_extable_fixup(uint64_t addr) { return (g_shim.site_seed & 2) ? addr : 0; }
int kjit_os_mirror_extable(uint64_t orig_addr, uint64_t copy_addr, uint64_t fixup_addr) {
  if (!kjit_os_may_translate(orig_addr)) fail("mirror_extable: original outside text", orig_addr);
  if (copy_addr < kCodeExec || copy_addr - kCodeExec >= kCodeSize) fail("mirror_extable: copy outside cache", copy_addr);
  if (fixup_addr && (fixup_addr < kCodeExec || fixup_addr - kCodeExec >= kCodeSize))
    fail("mirror_extable: fixup outside cache", fixup_addr);
  if (g_shim.mirror_ok) return 1;
  return (g_shim.site_seed & 1) ? -1 : 0;
}

void kjit_os_code_written(uint64_t exec_addr, uint64_t len) {
  if (exec_addr < kCodeExec || exec_addr - kCodeExec > kCodeSize || len > kCodeSize - (exec_addr - kCodeExec))
    fail("code_written outside the code cache", exec_addr, len);
}

void kjit_os_lock(void) {
  if (g_shim.lock_depth++ != 0) fail("nested engine lock");
}
void kjit_os_unlock(void) {
  if (--g_shim.lock_depth != 0) fail("unlock without lock");
}
int kjit_os_trylock(void) {
  if (g_shim.lock_depth != 0) return 0;
  g_shim.lock_depth++;
  return 1;
}
uint32_t kjit_os_cpu(void) { return 0; }
void kjit_os_quiesce(uint64_t lo, uint64_t hi) {
  if (lo >= hi) fail("quiesce of an empty range");
  if (g_shim.lock_depth) fail("quiesce under the engine lock");
}
void kjit_os_log(const char *msg) {
  if (!msg) fail("log(NULL)");
  (void)strlen(msg);  // must be NUL-terminated (ASan checks the read)
}
void kjit_os_symbolize(uint64_t addr, char *out, uint64_t out_len) {
  if (out_len) snprintf(out, out_len, "text+0x%llx", static_cast<unsigned long long>(addr - kTextBase));
}
// One fixed fake gate for every host function: the engine only embeds the
// address (nothing here executes translated code).  Non-zero also tells the
// engine that plugin routines live in another address space.
uint64_t kjit_os_host_call_gate(uint64_t fn) { return kHostCallGate; }
uint64_t kjit_os_host_context_gate(uint64_t fn) { return kHostCallGate; }

}  // extern "C"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool ready = [] {
    ZydisDecoderInit(&g_zydis, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    return true;
  }();
  (void)ready;
  if (size < 17) return 0;
  // Exact-size copies so that ASan flags any access past them.
  std::vector<uint8_t> text(data + 16, data + size);
  g_shim.text = text.data();
  g_shim.text_size = text.size();
  Stream ctl{data, 16};
  const uint8_t mode = ctl.byte();
  g_shim.site_seed = ctl.byte();
  g_shim.mirror_ok = (mode & 0x80) != 0;
  g_shim.lock_depth = 0;

  uint8_t *arena = static_cast<uint8_t *>(malloc(kArenaSize));
  uint8_t *code = static_cast<uint8_t *>(malloc(kCodeSize));
  uint8_t *dwin = static_cast<uint8_t *>(malloc(kDataSize));
  // The shim contract does not promise zeroed memory (a kernel host may hand
  // over recycled pages): fill it with an input-chosen byte, deterministically.
  const uint8_t fill = (mode & 8) ? ctl.byte() : 0;
  memset(arena, fill, kArenaSize);
  memset(code, fill, kCodeSize);
  memset(dwin, fill, kDataSize);
  kjit_os_memory mem{};
  mem.arena = arena;
  mem.arena_size = kArenaSize;
  mem.code_write_view = code;
  mem.code_exec_base = kCodeExec;
  mem.code_size = kCodeSize;
  mem.data_host_view = dwin;
  mem.data_exec_base = kDataExec;
  mem.data_size = kDataSize;
  kjit_os_kernel_facts facts{};
  facts.gate_direct = kGateDirect;
  facts.gate_indirect = kGateIndirect;
  if (mode & 0x40) {
    // Kernel thunks inside the fuzzed text, so calls/jumps can hit them.
    facts.return_thunk = kTextBase + ctl.u16() % text.size();
    facts.fentry = kTextBase + ctl.u16() % text.size();
    facts.retpoline_thunk[ctl.byte() & 15] = kTextBase + ctl.u16() % text.size();
    facts.its_thunk[ctl.byte() & 15] = kTextBase + ctl.u16() % text.size();
  }
  kjit_engine_options opt;
  kjit_engine_default_options(&opt);
  opt.inline_instrumentation = (mode >> 4) & 1;
  opt.use_liveness = (mode >> 5) & 1;
  opt.max_chain_length = ctl.byte() % 6;
  opt.max_block_insns = 1 + ctl.byte() % 64;

  if (kjit_engine_init(&mem, &facts, &opt) != 0) fail("kjit_engine_init");
  const uint8_t which = mode & 7;
  if (which < kNumPlugins) {
    if (kPlugins[which].init() == 0 && kjit_register_plugin(kPlugins[which].get()) != 0)
      fail("kjit_register_plugin");
  }
  kjit_engine_add_stop_address(kTextBase + text.size());  // "returns" past the end

  // Choices come from the code bytes too, so the fuzzer controls both.
  Stream pick{data, size};
  pick.i = 2;
  Stubs stubs;
  const int rounds = 1 + ctl.byte() % 3;
  for (int round = 0; round < rounds; round++) {
    for (int i = 0; i < 4; i++) {
      const uint64_t pc = kTextBase + pick.u16() % text.size();
      const uint64_t t = kjit_engine_enter(pc);
      if (t != pc) check_target(t, "enter");
      scan_block(code, t, &stubs);
    }
    for (int i = 0; i < 2; i++) {
      uint64_t succ[4];
      uint32_t nsucc = 0, ninsns = 0;
      const uint64_t pc = kTextBase + pick.u16() % text.size();
      const int rc = kjit_engine_build_only(pc, succ, &nsucc, &ninsns);
      if (rc >= 0 && (nsucc > 2 || ninsns == 0 || ninsns > opt.max_block_insns))
        fail("build_only result", nsucc, ninsns);
    }
    // Follow exits the way a dispatcher would, a bounded number of times.
    for (int i = 0; i < 24 && (!stubs.direct.empty() || !stubs.indirect.empty()); i++) {
      const uint8_t b = pick.byte();
      uint64_t t;
      if ((b & 1) || stubs.indirect.empty()) {
        if (stubs.direct.empty()) continue;
        t = kjit_engine_direct_exit(stubs.direct[b % stubs.direct.size()]);
      } else {
        const uint64_t target = (b & 2) ? kTextBase + pick.u16() % text.size() : kTextBase - 0x1000;
        t = kjit_engine_indirect_miss(stubs.indirect[b % stubs.indirect.size()], target);
      }
      if (getenv("KJIT_FUZZ_DEBUG"))
        fprintf(stderr, "exit b=%u -> 0x%llx (direct %zu indirect %zu)\n", b, (unsigned long long)t,
                stubs.direct.size(), stubs.indirect.size());
      check_target(t, "exit");
      scan_block(code, t, &stubs);
    }
    check_stats();
    if (g_shim.lock_depth) fail("engine lock held after an API call");
    if (round + 1 < rounds) {
      // A text change retires at once (atomic context in the kernel) and
      // is reclaimed later; or a plain flush.
      const uint8_t how = pick.byte();
      if (how & 1) {
        kjit_engine_retire();
        (void)kjit_engine_enter(kTextBase + pick.u16() % text.size());  // in the other half
        kjit_engine_reclaim();
      } else {
        kjit_engine_flush();
      }
      stubs.clear();
    }
  }
  kjit_engine_fini();
  free(arena);
  free(code);
  free(dwin);
  return 0;
}
