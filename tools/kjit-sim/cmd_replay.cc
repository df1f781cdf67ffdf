// SPDX-License-Identifier: GPL-2.0
// kjit-sim replay CAPTURE: re-executes a kernel capture (kjitctl capture)
// with the reads served from its log, original and translated, and checks
// the block sequence, reads, writes, return value and the tools' results
// against the kernel's (replay.h).  --profile N: where the translated runs
// execute more instructions than the original, by function and by pc (the
// pc a cache instruction was built from), the N largest of each.  --trace:
// every instruction the translated runs executed, with the original pc it
// counts at, disassembled.  --warm: the translated run that is reported
// runs from the cache a first run built.  --gdb [HOST:]PORT: the replay
// served to gdb instead (gdb_serve.h), of the original code or, with
// --translated, of the code cache.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <capstone/capstone.h>

#include "capture_file.h"
#include "cli.h"
#include "commands.h"
#include "gdb_serve.h"
#include "replay.h"
#include "replay_log.h"

namespace kjit::sim {

namespace {

// The N largest (key, translated - original) of `added`, largest first.
template <typename K>
std::vector<std::pair<K, long long>> largest(const std::map<K, long long> &added, size_t n) {
  std::vector<std::pair<K, long long>> v(added.begin(), added.end());
  std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  if (v.size() > n) v.resize(n);
  return v;
}

// The name of an original pc (a profile's or trace's key).  `syms`:
// link-time addresses (a kallsyms list), or empty: the capture's own
// symbols.  The capture's KASLR section relates the two.
std::function<std::string(uint64_t)> pc_namer(const Capture &cap, const ReplayLog &log, SymbolTable syms) {
  CaptureKaslr kaslr = capture_kaslr(cap);
  if (syms.empty()) {
    for (const SymbolTable::Sym &s : log.symbols) syms.add(s.addr, s.name);
    syms.finalize();
    kaslr = CaptureKaslr{};
  }
  return [syms = std::move(syms), kaslr](uint64_t pc) {
    if (pc == ReplayRun::kEngineCode) return std::string("(engine routines: IBL, gates)");
    std::string s = syms.symbolize(kaslr.to_link(pc));
    if (!s.empty()) return s;
    char b[32];
    snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(pc));
    return std::string(b);
  };
}

void print_profile(const ReplayReport &rep, const std::function<std::string(uint64_t)> &name_of, size_t n) {
  for (const ReplayRun &t : rep.translated) {
    std::map<uint64_t, long long> by_pc;
    std::map<std::string, long long> by_fn;
    for (const auto &[pc, k] : t.insns_at) by_pc[pc] += static_cast<long long>(k);
    for (const auto &[pc, k] : rep.original.insns_at) by_pc[pc] -= static_cast<long long>(k);
    for (const auto &[pc, d] : by_pc) {
      std::string f = name_of(pc);
      by_fn[f.substr(0, f.find('+'))] += d;
    }
    printf("profile %s: %llu insns, original %llu (+%lld)\n", t.what.c_str(), static_cast<unsigned long long>(t.insns),
           static_cast<unsigned long long>(rep.original.insns),
           static_cast<long long>(t.insns) - static_cast<long long>(rep.original.insns));
    for (const auto &[f, d] : largest(by_fn, n)) printf("  %+8lld %s\n", d, f.c_str());
    printf("  by pc:\n");
    for (const auto &[pc, d] : largest(by_pc, n)) printf("  %+8lld %s\n", d, name_of(pc).c_str());
  }
}

void print_trace(const ReplayReport &rep, const std::function<std::string(uint64_t)> &name_of) {
  csh cs;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) return;
  cs_insn *in = cs_malloc(cs);
  for (const ReplayRun &t : rep.translated) {
    printf("trace %s: %zu insns\n", t.what.c_str(), t.trace.size());
    for (const ReplayRun::Step &s : t.trace) {
      const uint8_t *code = s.bytes;
      size_t left = s.size;
      uint64_t addr = s.pc;
      const bool ok = cs_disasm_iter(cs, &code, &left, &addr, in);
      printf("  %016llx  %-36s %s %s\n", static_cast<unsigned long long>(s.pc), name_of(s.counted_at).c_str(),
             ok ? in->mnemonic : "(bad)", ok ? in->op_str : "");
    }
  }
  cs_free(in, 1);
  cs_close(&cs);
}

}  // namespace

int cmd_replay(int argc, char **argv) {
  std::string path;
  ReplayOptions opt;
  bool tools_given = false;
  size_t profile_n = 0;
  std::string sym_path;
  GdbServeOptions gdb;
  bool serve = false, budget_given = false, replay_only = false, gdb_only = false;
  enum { kTool = 1, kBudget, kVerbose, kSymbols, kProfile, kTrace, kWarm, kGdb, kTranslated, kVmlinux, kCheckpoints };
  static const option kOptions[] = {
      {"tool", required_argument, nullptr, kTool},       {"budget", required_argument, nullptr, kBudget},
      {"verbose", no_argument, nullptr, kVerbose},       {"symbols", required_argument, nullptr, kSymbols},
      {"profile", required_argument, nullptr, kProfile}, {"trace", no_argument, nullptr, kTrace},
      {"warm", no_argument, nullptr, kWarm},             {"gdb", required_argument, nullptr, kGdb},
      {"translated", no_argument, nullptr, kTranslated}, {"vmlinux", required_argument, nullptr, kVmlinux},
      {"checkpoint-every", required_argument, nullptr, kCheckpoints}, {nullptr, 0, nullptr, 0}};
  uint64_t num = 0;
  for (int o, first = 1; (o = cli_next(argc, argv, "", kOptions, first)) != -1; first = 0) {
    switch (o) {
      case kTool: {
        replay_only = true;
        if (!tools_given) opt.tools.clear();
        tools_given = true;
        std::stringstream ss(optarg);
        for (std::string t; std::getline(ss, t, ',');) opt.tools.push_back(t);
        break;
      }
      case kBudget:
        if (!cli_number("replay", "--budget", optarg, UINT64_MAX, &num)) return 2;
        opt.budget = num;
        budget_given = true;
        break;
      case kVerbose: opt.quiet = false; break;
      case kSymbols: sym_path = optarg; break;
      case kProfile:
        replay_only = true;
        if (!cli_number("replay", "--profile", optarg, UINT32_MAX, &num)) return 2;
        opt.profile = true;
        profile_n = num;
        break;
      case kTrace: opt.trace = replay_only = true; break;
      case kWarm: opt.warm = replay_only = true; break;
      case kGdb:
        serve = true;
        gdb.address = optarg;
        break;
      case kTranslated: gdb.translated = gdb_only = true; break;
      case kVmlinux:
        gdb.vmlinux = optarg;
        gdb_only = true;
        break;
      case kCheckpoints:
        if (!cli_number("replay", "--checkpoint-every", optarg, UINT32_MAX, &num)) return 2;
        gdb.checkpoint_every = num;
        gdb_only = true;
        break;
      default: return 2;  // getopt said what
    }
  }
  if (!cli_one_operand("replay", "CAPTURE", argc, argv, &path)) return 2;
  if (serve && replay_only) {
    fprintf(stderr, "kjit-sim replay: --gdb serves one view to gdb: not with --tool, --profile, --trace or --warm\n");
    return 2;
  }
  if (!serve && gdb_only) {
    fprintf(stderr, "kjit-sim replay: --translated, --vmlinux and --checkpoint-every go with --gdb\n");
    return 2;
  }
  Capture cap;
  ReplayLog log;
  std::string err = load_capture_file(path, &cap);
  if (err.empty()) {
    err = parse_replay_log(cap, &log);
    if (!err.empty()) err = path + ": " + err;
  }
  SymbolTable kallsyms;
  if (err.empty() && !sym_path.empty()) {
    err = kallsyms.load_kallsyms(sym_path);
    opt.kallsyms = &kallsyms;
  }
  if (err.empty() && serve) {
    if (budget_given) gdb.budget = opt.budget;
    gdb.kallsyms = opt.kallsyms;
    gdb.quiet = opt.quiet;
    return serve_gdb(path, cap, log, gdb);
  }
  ReplayReport rep;
  if (err.empty()) err = replay_capture(cap, log, opt, &rep);
  if (!err.empty()) {
    fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  printf("%s: %s, %zu blocks, %zu reads, %zu nondet, %zu sleeps, kernel end %s\n", path.c_str(), cap.name.c_str(),
         log.blocks.size(), log.reads.size(), log.nondets.size(), log.resumes.size(), end_reason_name(log.kernel.end));
  printf("%s", rep.text().c_str());
  double t = rep.original.seconds;
  uint64_t n = rep.original.insns;
  for (const ReplayRun &r : rep.translated) {
    t += r.seconds;
    n += r.insns;
  }
  if (opt.profile || opt.trace) {
    const auto name_of = pc_namer(cap, log, kallsyms);
    if (opt.trace) print_trace(rep, name_of);
    if (opt.profile) print_profile(rep, name_of, profile_n);
  }
  printf("summary: %s; %llu kernel insns, %zu blocks, %zu sleeps; replay %.1f ms for %zu runs (%.2f M insns/s)\n",
         rep.ok ? "ok" : "FAILED", static_cast<unsigned long long>(log.kernel_icount()), log.blocks.size(),
         log.resumes.size(), t * 1e3, 1 + rep.translated.size(), t > 0 ? n / t / 1e6 : 0.0);
  return rep.ok ? 0 : 1;
}

}  // namespace kjit::sim
