// SPDX-License-Identifier: GPL-2.0
// kjit-sim kernel-diff: runs real functions of the kernel image, on varied
// inputs, natively and translated, with no plugin and under every example
// tool; every run must agree, and every tool must equal the reference.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "cli.h"
#include "commands.h"
#include "kjit/engine.h"
#include "diff_runner.h"
#include "kernel_cases.h"
#include "kernel_image.h"
#include "tool_registry.h"

namespace kjit::sim {
namespace {

constexpr uint64_t kStackTop = 0xffffc90000100000ull;
constexpr uint64_t kGsBase = 0xffffc90000200000ull;

std::string build_case_capture(const KernelImage &img, const KernelCase &kc, uint64_t entry,
                               const CaseInput &in, Capture *cap) {
  CaptureBuilder b;
  std::string err = img.add_to(b);
  if (!err.empty()) return err;
  b.add_region(kScratchBase, in.scratch, 3 /* rw */);
  b.add_zero_region(kGsBase, 0x10000, 3);
  b.add_stack(kStackTop, 0x10000);
  for (int i = 0; i < 6; i++) b.set_arg(i, in.args[i]);
  b.set_gs_base(kGsBase);
  b.set_entry(entry);
  b.set_name(kc.function);
  return b.build(cap);
}

struct Outcome {
  bool ok = true;
  std::string first_problem;
};

void note(Outcome &o, const std::string &what) {
  if (o.ok) o.first_problem = what;
  o.ok = false;
}

}  // namespace

int cmd_kernel_diff(int argc, char **argv) {
  std::string vmlinux, kallsyms, only, save_dir;
  // Functions a kernel flavour builds as modules: absent from its text,
  // reported and left out of the count instead of failing.
  std::set<std::string> may_be_absent;
  int variants = 4;
  uint64_t seed = 1;
  bool with_tools = true;
  kjit_engine_options engine;
  kjit_engine_default_options(&engine);
  uint64_t code_bytes = 0;
  enum { kVmlinux = 1, kSymbols, kOnly, kVariants, kSeed, kAllowAbsent, kNoTools, kSave, kNoInline,
         kNoLiveness, kNoAbiReturns, kChain, kCodeBytes };
  static const option kOptions[] = {
      {"vmlinux", required_argument, nullptr, kVmlinux},   {"symbols", required_argument, nullptr, kSymbols},
      {"only", required_argument, nullptr, kOnly},         {"variants", required_argument, nullptr, kVariants},
      {"seed", required_argument, nullptr, kSeed},         {"allow-absent", required_argument, nullptr, kAllowAbsent},
      {"no-tools", no_argument, nullptr, kNoTools},        {"save", required_argument, nullptr, kSave},
      {"no-inline", no_argument, nullptr, kNoInline},      {"no-liveness", no_argument, nullptr, kNoLiveness},
      {"no-abi-returns", no_argument, nullptr, kNoAbiReturns}, {"chain", required_argument, nullptr, kChain},
      {"code-bytes", required_argument, nullptr, kCodeBytes}, {nullptr, 0, nullptr, 0}};
  uint64_t n = 0;
  for (int o, first = 1; (o = cli_next(argc, argv, "", kOptions, first)) != -1; first = 0) {
    switch (o) {
      case kVmlinux: vmlinux = optarg; break;
      case kSymbols: kallsyms = optarg; break;
      case kOnly: only = optarg; break;
      case kVariants:
        if (!cli_number("kernel-diff", "--variants", optarg, INT32_MAX, &n)) return 2;
        variants = static_cast<int>(n);
        break;
      case kSeed:
        if (!cli_number("kernel-diff", "--seed", optarg, UINT64_MAX, &n)) return 2;
        seed = n;
        break;
      case kAllowAbsent: {
        std::string names = optarg;
        for (size_t at = 0; at <= names.size();) {
          size_t comma = names.find(',', at);
          if (comma == std::string::npos) comma = names.size();
          if (comma > at) may_be_absent.insert(names.substr(at, comma - at));
          at = comma + 1;
        }
        break;
      }
      case kNoTools: with_tools = false; break;
      case kSave: save_dir = optarg; break;
      case kNoInline: engine.inline_instrumentation = 0; break;
      case kNoLiveness: engine.use_liveness = 0; break;
      case kNoAbiReturns: engine.abi_returns = 0; break;
      case kChain:
        if (!cli_number("kernel-diff", "--chain", optarg, UINT32_MAX, &n)) return 2;
        engine.max_chain_length = static_cast<uint32_t>(n);
        break;
      case kCodeBytes:
        if (!cli_number("kernel-diff", "--code-bytes", optarg, UINT64_MAX, &n)) return 2;
        code_bytes = n;
        break;
      default: return 2;  // getopt said what
    }
  }
  if (optind < argc) {
    fprintf(stderr, "kjit-sim kernel-diff: unexpected argument %s\n", argv[optind]);
    return 2;
  }
  if (vmlinux.empty() || kallsyms.empty()) {
    fprintf(stderr, "usage: kjit-sim kernel-diff --vmlinux FILE --symbols KALLSYMS[.xz] [--only FN] "
                    "[--variants N] [--seed S] [--allow-absent FN,...] [--no-tools] [--no-inline] [--no-liveness] [--code-bytes N] [--chain N] [--save DIR]\n");
    return 2;
  }
  KernelImage img;
  std::string err = img.load(vmlinux, kallsyms);
  if (!err.empty()) {
    fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  std::vector<const Tool *> modes = {nullptr};
  if (with_tools)
    for (const Tool &t : tools()) modes.push_back(&t);

  auto t0 = std::chrono::steady_clock::now();
  int functions = 0, passed = 0;
  std::string absent;
  uint64_t runs = 0, flushes = 0;
  for (const KernelCase &kc : kernel_cases()) {
    if (!only.empty() && only != kc.function) continue;
    uint64_t entry = img.symbols.address_of(kc.function);
    if (!entry && may_be_absent.count(kc.function)) {
      printf("%-22s ABSENT    (not in this kernel's text: --allow-absent)\n", kc.function);
      absent += absent.empty() ? kc.function : std::string(", ") + kc.function;
      continue;
    }
    functions++;
    Outcome o;
    if (!entry) note(o, "symbol not found");
    std::mt19937_64 rng(seed ^ std::hash<std::string>{}(kc.function));
    uint64_t insns = 0;
    for (int v = 0; o.ok && v < variants; v++) {
      CaseInput in;
      kc.make(in, rng, v);
      Capture cap;
      err = build_case_capture(img, kc, entry, in, &cap);
      if (!err.empty()) {
        note(o, err);
        break;
      }
      if (!save_dir.empty())  // reproducible with `kjit-sim run FILE --tool T`
        save_capture_file(save_dir + "/" + kc.function + "-" + std::to_string(v) + ".kjitcap", cap);
      for (const Tool *tool : modes) {
        DiffOptions opt;
        opt.translated.engine = engine;
        if (code_bytes) opt.translated.code_size = code_bytes;
        opt.translated.symbols = &img.symbols;
        opt.translated.quiet = true;
        std::string report;
        if (tool) {
          opt.translated.plugin_init = tool->init;
          opt.translated.plugin = tool->plugin();
          opt.after_translated = [&](TranslatedRunner &) { report = tool->report(); };
        }
        DiffResult d = run_diff(cap, opt);
        runs++;
        flushes += d.translated.stats.cache_full;
        insns += d.reference.counts.instructions;
        std::string mode = tool ? tool->name : "none";
        if (!d.error.empty()) note(o, mode + ": " + d.error);
        else if (!d.equal) note(o, mode + " variant " + std::to_string(v) + ": " + describe_diff(d));
        else if (tool && report != tool->reference(d.reference.counts))
          note(o, mode + " variant " + std::to_string(v) + ": tool " + report + " != reference " +
                      tool->reference(d.reference.counts));
        if (!o.ok) break;
      }
    }
    passed += o.ok;
    printf("%-22s %s  (%llu reference insns)%s%s\n", kc.function, o.ok ? "AGREE   " : "DIVERGE ",
           static_cast<unsigned long long>(insns), o.ok ? "" : "\n    ", o.first_problem.c_str());
    fflush(stdout);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("kernel-diff: %d/%d functions agree, %llu runs (%d variants x %zu modes), %llu flushes of a full cache, %.1f s%s%s\n",
         passed, functions, static_cast<unsigned long long>(runs), variants, modes.size(),
         static_cast<unsigned long long>(flushes), secs, absent.empty() ? "" : "; absent: ", absent.c_str());
  return passed == functions && functions > 0 ? 0 : 1;
}

}  // namespace kjit::sim
