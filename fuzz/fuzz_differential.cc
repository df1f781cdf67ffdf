// SPDX-License-Identifier: GPL-2.0
// fuzz_differential: a valid, terminating program generated from the input
// (program_generator.h) runs as a capture at 0xffffffff81000000 twice, as
// the original code under Unicorn and as the engine's translation, first
// with no plugin and then with each tool of the simulator's registry
// (tools/kjit-sim/tool_registry.h, as `kjit-sim run --tool` does).  Any
// divergence of registers, flags or memory writes, any run that does not end
// at the sentinel, and any tool whose report differs from the reference
// runner's count aborts with describe_diff().
//
// KJIT_FUZZ_PRINT=1 prints each generated program's disassembly.
#include <capstone/capstone.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "capture_builder.h"
#include "diff_runner.h"
#include "program_generator.h"
#include "tool_registry.h"

using namespace kjit::sim;
using kjit::fuzz::GeneratedProgram;

namespace {

[[noreturn]] void fail(const Capture &cap, const GeneratedProgram &p, const std::string &what,
                       const DiffResult *d) {
  fprintf(stderr, "fuzz_differential: %s\n", what.c_str());
  if (d) fprintf(stderr, "%s\n", describe_diff(*d).c_str());
  csh h;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK) {
    cs_insn *in = nullptr;
    const size_t n = cs_disasm(h, p.code.data(), p.code.size(), kjit::fuzz::kGenCodeBase, 0, &in);
    for (size_t i = 0; i < n; i++)
      fprintf(stderr, "  %llx: %s %s\n", static_cast<unsigned long long>(in[i].address), in[i].mnemonic,
              in[i].op_str);
    if (in) cs_free(in, n);
    cs_close(&h);
  }
  (void)cap;
  __builtin_trap();
}

DiffOptions base_options() {
  DiffOptions opt;
  // Generated programs run a few thousand instructions at most; the budget
  // only catches a generator bug (a loop that does not end).
  opt.reference.budget = 50'000;
  opt.translated.budget = 400'000;  // gates, stubs and instrumentation included
  opt.translated.quiet = true;
  // Small engine memory: host_alloc zeroes it on every run.
  opt.translated.arena_size = 2 << 20;
  opt.translated.code_size = 1 << 20;
  opt.translated.data_size = 2 << 20;
  return opt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  const uint8_t mode = data[0];
  GeneratedProgram prog;
  const std::string gerr = kjit::fuzz::generate_program(data + 1, size - 1, &prog);
  Capture cap;
  if (!gerr.empty()) fail(cap, prog, "generator: " + gerr, nullptr);

  CaptureBuilder b;
  b.add_region(kjit::fuzz::kGenCodeBase, prog.code, kPermR | kPermX)
      .add_region(kjit::fuzz::kGenDataBase, prog.data, kPermR | kPermW)
      .add_stack(kjit::fuzz::kGenStackTop, kjit::fuzz::kGenStackSize)
      .set_rflags(prog.rflags)
      .set_entry(kjit::fuzz::kGenCodeBase)
      .set_name("fuzz_differential");
  for (int r = 0; r < 16; r++)
    if (r != KJIT_REG_RSP) b.set_gpr(r, prog.regs[r]);
  const std::string berr = b.build(&cap);
  if (!berr.empty()) fail(cap, prog, "capture: " + berr, nullptr);
  const bool print = getenv("KJIT_FUZZ_PRINT") != nullptr;

  auto check = [&](const DiffResult &d, const char *what) {
    if (!d.error.empty()) fail(cap, prog, std::string(what) + ": setup error: " + d.error, &d);
    if (d.reference.run.reason != StopReason::kSentinel)
      fail(cap, prog, std::string(what) + ": the original program did not return (generator bug?)", &d);
    if (!d.equal) fail(cap, prog, std::string(what) + ": translation diverges", &d);
    // The programs are plain kernel-style code: the engine must really run
    // them from the cache (a silent native fallback would make the
    // comparison vacuous).
    if (d.translated.cache_insns == 0)
      fail(cap, prog, std::string(what) + ": nothing ran in the code cache", &d);
  };

  DiffOptions opt = base_options();
  // Engine options from the input: inlining and liveness on/off, chain length.
  opt.translated.engine.inline_instrumentation = (mode & 1) ? 0 : 1;
  opt.translated.engine.use_liveness = (mode & 2) ? 0 : 1;
  opt.translated.engine.max_chain_length = 1 + (mode >> 2) % 4;
  if (mode & 0x40) {
    // A tiny code cache: translation fills it mid-run, switches epochs and
    // falls back to native code until the host reclaims (flush paths).
    opt.translated.code_size = 8192;
    opt.translated.arena_size = 1 << 20;
  }
  if (mode & 0x80) opt.translated.engine.max_block_insns = 1 + (mode >> 2) % 8;  // short blocks
  {
    const DiffResult d = run_diff(cap, opt);
    check(d, "no tool");
    if (print)
      fprintf(stderr, "program: %zu insns, %zu bytes; ran %llu insns, %llu blocks, %zu calls, %llu lock cmpxchg; "
                      "cache insns %llu, blocks built %llu, fallbacks %llu, gates %llu/%llu\n",
              prog.insns, prog.code.size(), static_cast<unsigned long long>(d.reference.counts.instructions),
              static_cast<unsigned long long>(d.reference.counts.blocks), d.reference.counts.call_trace.size(),
              static_cast<unsigned long long>(d.reference.counts.lock_cmpxchg),
              static_cast<unsigned long long>(d.translated.cache_insns),
              static_cast<unsigned long long>(d.translated.stats.blocks_built),
              static_cast<unsigned long long>(d.translated.stats.fallbacks),
              static_cast<unsigned long long>(d.translated.direct_gates),
              static_cast<unsigned long long>(d.translated.indirect_gates));
  }

  // Each tool in turn (all of them: the runs are short).
  for (const Tool &t : tools()) {
    DiffOptions o = opt;
    std::string report;
    o.translated.plugin_init = t.init;
    o.translated.plugin = t.plugin();
    o.after_translated = [&](TranslatedRunner &) { report = t.report(); };
    const DiffResult d = run_diff(cap, o);
    check(d, t.name.c_str());
    const std::string ref = t.reference(d.reference.counts);
    if (report != ref)
      fail(cap, prog, "tool " + t.name + " disagrees with the reference:\n  tool:      " + report +
                          "\n  reference: " + ref, &d);
  }
  return 0;
}
