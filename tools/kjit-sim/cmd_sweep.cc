// SPDX-License-Identifier: GPL-2.0
// kjit-sim sweep: translates the whole kernel .text offline.  From every
// function start in the kallsyms list, every block reachable by direct
// branches inside the function is decoded and built (without running it);
// each instruction is also decoded by Capstone as a second opinion.
#include <capstone/capstone.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "arch/x86/decoder.h"
#include "cli.h"
#include "commands.h"
#include "kernel_image.h"
#include "kjit/engine.h"
#include "sim_shim.h"

namespace kjit::sim {
namespace {

struct SweepTotals {
  uint64_t functions = 0, instructions = 0, blocks = 0, full = 0, fallback = 0, declined = 0;
  uint64_t disagreements = 0;
  double build_seconds = 0;
  // The decoder alone (the engine's wrapper over Zydis), timed over the
  // linear pass below: what a build pays at least per instruction.
  uint64_t decoded = 0;
  double decode_seconds = 0;
  // Non-deterministic instructions (kjit_nondet_kind) by mnemonic and kind,
  // from a linear pass over every function (blocks reached only through
  // alternatives or static keys included).
  std::map<std::pair<uint32_t, uint8_t>, uint64_t> nondet;
};

// Linear decode of [start, end): every instruction the function's bytes
// hold, resynchronising one byte after an undecodable one.
void count_nondet(const x86::Decoder &zydis, const ElfSection &text, uint64_t start, uint64_t end,
                  SweepTotals *t) {
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t at = start; at < end;) {
    const uint8_t *bytes = text.bytes.data() + (at - text.addr);
    const uint32_t avail = static_cast<uint32_t>(std::min<uint64_t>(15, text.addr + text.size - at));
    x86::Insn in;
    if (zydis.decode(at, bytes, avail, &in) != x86::DecodeStatus::kOk) {
      at++;
      continue;
    }
    if (in.nondet != KJIT_NONDET_NONE) t->nondet[{in.mnemonic, in.nondet}]++;
    t->decoded++;
    at += in.length;
  }
  t->decode_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const char *nondet_handling(uint8_t kind) {
  switch (kind) {
    case KJIT_NONDET_REGISTERS: return "registers: logged after it ran, loaded by the replay";
    case KJIT_NONDET_FLAGS: return "flags: logged after it ran, loaded by the replay";
    case KJIT_NONDET_MEMORY: return "memory: skipped by the replay, later reads of it logged";
    case KJIT_NONDET_EFFECT: return "machine state only: skipped by the replay";
    default: return "?";
  }
}

// A function in .text.  Not the 16 bytes of NOPs before each function of a
// kernel built with call padding (__pfx_NAME): they are no function, and
// counting them would double the functions swept.
bool is_text_symbol(const SymbolTable::Sym &s, const ElfSection &text) {
  return s.addr >= text.addr && s.addr < text.addr + text.size && s.name.rfind("__pfx_", 0) != 0;
}

}  // namespace

int cmd_sweep(int argc, char **argv) {
  std::string vmlinux, kallsyms;
  uint64_t limit = ~0ull;
  bool verbose = false;
  enum { kVmlinux = 1, kSymbols, kLimit, kVerbose };
  static const option kOptions[] = {{"vmlinux", required_argument, nullptr, kVmlinux},
                                    {"symbols", required_argument, nullptr, kSymbols},
                                    {"limit", required_argument, nullptr, kLimit},
                                    {"verbose", no_argument, nullptr, kVerbose}, {nullptr, 0, nullptr, 0}};
  for (int o, first = 1; (o = cli_next(argc, argv, "", kOptions, first)) != -1; first = 0) {
    switch (o) {
      case kVmlinux: vmlinux = optarg; break;
      case kSymbols: kallsyms = optarg; break;
      case kLimit: {
        uint64_t n = 0;
        if (!cli_number("sweep", "--limit", optarg, UINT64_MAX, &n)) return 2;
        limit = n;
        break;
      }
      case kVerbose: verbose = true; break;
      default: return 2;  // getopt said what
    }
  }
  if (optind < argc) {
    fprintf(stderr, "kjit-sim sweep: unexpected argument %s\n", argv[optind]);
    return 2;
  }
  if (vmlinux.empty() || kallsyms.empty()) {
    fprintf(stderr, "usage: kjit-sim sweep --vmlinux FILE --symbols KALLSYMS[.xz] [--limit N] [--verbose]\n");
    return 2;
  }
  KernelImage img;
  std::string err = img.load(vmlinux, kallsyms);
  if (!err.empty()) {
    fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  const ElfSection &text = *img.text();
  CaptureBuilder b;
  b.add_region(text.addr, text.bytes, 5 /* r-x */);
  b.set_entry(text.addr);
  Capture cap;
  if (!(err = b.build(&cap)).empty()) {
    fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }

  // Engine memory: translation only, nothing runs, so the exec view is the
  // simulator's usual cache address and the bytes stay in host buffers.
  std::vector<uint8_t> arena(uint64_t{KJIT_DEFAULT_ARENA_KB} << 10), code(uint64_t{KJIT_DEFAULT_CACHE_KB} << 10),
      data(1u << 20);
  kjit_os_memory mem{};  // no per-CPU window: a sweep builds, never runs
  mem.arena = arena.data();
  mem.arena_size = arena.size();
  mem.code_write_view = code.data();
  mem.code_exec_base = 0xffffffffc0000000ull;
  mem.code_size = code.size();
  mem.data_host_view = data.data();
  mem.data_exec_base = 0xffffffffd0000000ull;
  mem.data_size = data.size();
  ShimConfig sc;
  sc.capture = &cap;
  sc.symbols = &img.symbols;
  sc.memory = mem;
  shim_configure(sc);
  shim_set_quiet(true);
  kjit_os_kernel_facts facts = shim_kernel_facts();
  if (kjit_engine_init(&mem, &facts, nullptr) != 0) {
    fprintf(stderr, "error: kjit_engine_init failed\n");
    return 2;
  }
  kjit::x86::Decoder zydis;
  zydis.init(&facts);
  csh cs;
  cs_open(CS_ARCH_X86, CS_MODE_64, &cs);
  cs_insn *ci = cs_malloc(cs);

  SweepTotals t;
  const auto &syms = img.symbols.all();
  for (size_t si = 0; si < syms.size() && t.functions < limit; si++) {
    if (!is_text_symbol(syms[si], text)) continue;
    uint64_t start = syms[si].addr;
    if (si + 1 < syms.size() && syms[si + 1].addr == start) continue;  // aliases: once
    uint64_t end = text.addr + text.size;
    for (size_t sj = si + 1; sj < syms.size(); sj++)
      if (syms[sj].addr > start) {
        end = syms[sj].addr;
        break;
      }
    t.functions++;
    count_nondet(zydis, text, start, end, &t);
    std::set<uint64_t> seen{start};
    std::vector<uint64_t> work{start};
    while (!work.empty()) {
      uint64_t pc = work.back();
      work.pop_back();
      uint64_t succ[4];
      uint32_t nsucc = 0, ninsns = 0;
      if (kjit_engine_reclaim_pending()) kjit_engine_flush();
      auto b0 = std::chrono::steady_clock::now();
      int rc = kjit_engine_build_only(pc, succ, &nsucc, &ninsns);
      t.build_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
      t.blocks++;
      if (rc < 0) {
        t.declined++;
        if (verbose) printf("declined %s\n", img.symbols.symbolize(pc).c_str());
        continue;
      }
      (rc == 0 ? t.full : t.fallback)++;
      // Second opinion on every instruction of the block.
      uint64_t at = pc;
      for (uint32_t k = 0; k < ninsns; k++) {
        const uint8_t *bytes = text.bytes.data() + (at - text.addr);
        size_t avail = std::min<uint64_t>(15, text.addr + text.size - at);
        kjit::x86::Insn in;
        bool zok = zydis.decode(at, bytes, static_cast<uint32_t>(avail), &in) == kjit::x86::DecodeStatus::kOk;
        const uint8_t *cp = bytes;
        size_t csz = avail;
        uint64_t caddr = at;
        bool cok = cs_disasm_iter(cs, &cp, &csz, &caddr, ci);
        if (zok != cok || (zok && ci->size != in.length)) {
          t.disagreements++;
          if (verbose)
            printf("disagree at %s: zydis %u capstone %u (%s %s)\n", img.symbols.symbolize(at).c_str(),
                   zok ? in.length : 0, cok ? ci->size : 0, cok ? ci->mnemonic : "-", cok ? ci->op_str : "");
        }
        t.instructions++;
        if (!zok) break;

        at += in.length;
      }
      for (uint32_t s = 0; s < nsucc; s++)
        if (succ[s] >= start && succ[s] < end && seen.insert(succ[s]).second) work.push_back(succ[s]);
    }
  }
  cs_free(ci, 1);
  cs_close(&cs);
  kjit_engine_stats st;
  kjit_engine_get_stats(&st);
  kjit_engine_fini();
  shim_reset();

  double pct = t.blocks ? 100.0 * static_cast<double>(t.full) / static_cast<double>(t.blocks) : 0;
  double ns_per_block = t.blocks ? t.build_seconds * 1e9 / static_cast<double>(t.blocks) : 0;
  printf("functions:             %llu\n", static_cast<unsigned long long>(t.functions));
  printf("blocks built:          %llu fully, %llu with a fallback, %llu declined (run natively)\n",
         static_cast<unsigned long long>(t.full), static_cast<unsigned long long>(t.fallback),
         static_cast<unsigned long long>(t.declined));
  printf("zydis/capstone:        %llu disagreements\n", static_cast<unsigned long long>(t.disagreements));
  printf("engine:                %llu flushes, %llu bytes of cache in use at the end\n",
         static_cast<unsigned long long>(st.flushes), static_cast<unsigned long long>(st.cache_bytes_used));
  printf("speed:                 %.0f instructions/s, %.0f ns/block\n",
         t.build_seconds > 0 ? static_cast<double>(t.instructions) / t.build_seconds : 0, ns_per_block);
  // What the builds asked the decoder for, and how many of those Zydis
  // decoded: the rest came from the decode cache, by address, by encoding
  // or relocated by shape.  Zydis's time per instruction, measured on the side, times
  // its decodes per block is its share of ns/block.
  const uint64_t asked = st.decoded_by_address + st.decoded_by_encoding + st.decoded_relocated + st.decoded;
  printf("decode cache:          %llu instructions asked for: %llu by address, %llu by encoding, %llu relocated,"
         " %llu decoded\n",
         static_cast<unsigned long long>(asked), static_cast<unsigned long long>(st.decoded_by_address),
         static_cast<unsigned long long>(st.decoded_by_encoding),
         static_cast<unsigned long long>(st.decoded_relocated), static_cast<unsigned long long>(st.decoded));
  const double ns_per_decode = t.decoded ? t.decode_seconds * 1e9 / static_cast<double>(t.decoded) : 0;
  const double decodes_per_block = t.blocks ? static_cast<double>(st.decoded) / static_cast<double>(t.blocks) : 0;
  printf("decoder:               %.0f ns/instruction (%llu decoded linearly); %.1f decodes/block: %.0f ns/block\n",
         ns_per_decode, static_cast<unsigned long long>(t.decoded), decodes_per_block, ns_per_decode * decodes_per_block);
  // Every instruction a capture logs as NONDET, and how capture and replay
  // handle it (docs/capture-format.md, NONDET).
  uint64_t nondet_total = 0;
  for (const auto &m : t.nondet) nondet_total += m.second;
  printf("nondet:                %llu instructions in the functions' bytes, each logged by a capture\n",
         static_cast<unsigned long long>(nondet_total));
  for (const auto &m : t.nondet) {
    std::string name = x86::mnemonic_name(m.first.first);
    if (name == "mov")
      name = m.first.second == KJIT_NONDET_REGISTERS ? "mov r,cr/dr/sreg"
             : m.first.second == KJIT_NONDET_MEMORY  ? "mov m,sreg"
                                                     : "mov cr/dr/sreg,r";
    printf("  nondet %-16s %7llu  %s\n", name.c_str(), static_cast<unsigned long long>(m.second),
           nondet_handling(m.first.second));
  }
  printf("sweep: %llu instructions, %llu blocks, %.2f%% translated, %.0f ns/block\n",
         static_cast<unsigned long long>(t.instructions), static_cast<unsigned long long>(t.blocks), pct,
         ns_per_block);
  return 0;
}

}  // namespace kjit::sim
