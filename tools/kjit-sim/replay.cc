// SPDX-License-Identifier: GPL-2.0
#include "replay.h"
#include "hex_text.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include "arch/x86/decoder.h"
#include "log_server.h"
#include "replay_memory.h"
#include "c_functions.h"
#include "c_return.h"
#include "sim_shim.h"
#include "thunks.h"
#include "tool_registry.h"
#include "translated_runner.h"

namespace kjit::sim {
namespace {

const char *const kRegNames[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                   "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
constexpr uint64_t kArith = 0x8d5;


bool read_fault(const RunResult &r) {
  return r.reason == StopReason::kFault && r.message.rfind("read from unmapped", 0) == 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

ReplayRun run_original(const Capture &aug, const ReplayLog &log, const ThunkMap &thunks, uint64_t funnel,
                       const ReplayOptions &opt, ReferenceCounts *counts) {
  ReplayRun rr;
  rr.what = "original";
  const auto t0 = std::chrono::steady_clock::now();
  Emulator emu;
  std::string err = emu.load_capture(aug);
  if (err.empty()) err = emu.map_sentinel(aug.sentinel);
  if (err.empty()) err = emu.map_stack(aug.regs.gpr[KJIT_REG_RSP], 64 * 1024);
  if (err.empty() && !emu.push(aug.sentinel)) err = "cannot push the sentinel";
  if (!err.empty()) {
    rr.error = err;
    return rr;
  }
  ReferenceCounter counter(aug.entry_pc, thunks.empty() ? nullptr : &thunks);
  counter.attach(emu);  // first: a skipped nondet instruction still counts
  if (opt.profile)
    emu.add_code_hook(1, ~uint64_t{0}, [&rr](Emulator &, uint64_t pc, uint32_t) { rr.insns_at[pc]++; });
  LogServer server(aug, log, [](uint64_t pc) { return pc; }, false);
  server.set_funnel(funnel);
  server.on_sleep([&counter](uint64_t target) { counter.call_went_to(target); });
  server.attach(emu);
  rr.run = emu.run(aug.entry_pc, aug.sentinel, opt.budget);
  counter.finish(emu);
  *counts = counter.counts();
  rr.final_regs = emu.regs();
  for (const MemWrite &w : emu.writes())
    if (!thunks.inside(w.pc)) rr.writes.push_back(w);
  rr.served = server.state();
  rr.insns = rr.run.insns;
  rr.seconds = seconds_since(t0);
  return rr;
}

// `reference`: the original run's counts, for Tool::differences (or null).
ReplayRun run_translated(const Capture &aug, const ReplayLog &log, const SymbolTable *syms, const Tool *tool,
                         const ReferenceCounts *reference, const ReplayOptions &opt) {
  ReplayRun rr;
  rr.what = std::string("translated") + (tool ? " (" + tool->name + ")" : "");
  const auto t0 = std::chrono::steady_clock::now();
  TranslatedOptions to;
  if (opt.engine_set) to.engine = opt.engine;
  to.budget = opt.budget;
  if (opt.cache_size) to.code_size = opt.cache_size;
  to.symbols = syms;
  to.quiet = opt.quiet;
  if (tool) {
    to.plugin_init = tool->init;
    to.plugin = tool->plugin();
  }
  TranslatedRunner tr(aug, to);
  LogServer server(aug, log, [&tr](uint64_t pc) -> uint64_t {
    if (tr.is_cache_address(pc)) return tr.original_pc(pc);
    if (tr.is_engine_address(pc)) return 0;
    return pc;
  }, true);
  bool recording = !opt.warm;  // not during a warm-up run
  if (opt.profile || opt.trace)
    // A cache instruction that is no copy (a transfer's translation, a
    // chain's compare, a push) counts at the copy executed before it: the
    // block whose end made it.
    tr.emulator().add_code_hook(1, ~uint64_t{0}, [&rr, &tr, &opt, &recording, last = uint64_t{0}](
                                                         Emulator &emu, uint64_t pc, uint32_t size) mutable {
      if (!recording) return;
      uint64_t at;
      if (tr.is_cache_address(pc)) {
        const uint64_t orig = tr.original_pc(pc);
        if (orig) last = orig;
        at = last ? last : ReplayRun::kEngineCode;
      } else {
        at = tr.is_engine_address(pc) ? ReplayRun::kEngineCode : pc;
      }
      if (opt.profile) rr.insns_at[at]++;
      if (opt.trace) {
        ReplayRun::Step s{pc, at, {}, std::min<uint32_t>(size, sizeof s.bytes)};
        if (!emu.read(pc, s.bytes, s.size)) s.size = 0;
        rr.trace.push_back(s);
      }
    });
  server.attach(tr.emulator());
  tr.set_skipped_calls([&server](Emulator &emu) { return server.resume_at_gate(emu); }, native_calls(log, syms));
  TranslatedResult res = tr.run();
  if (opt.warm && res.error.empty()) {
    if (res.run.reason != StopReason::kSentinel || !server.state().error.empty()) {
      rr.error = "warm-up run: " + std::string(stop_reason_name(res.run.reason)) +
                 (server.state().error.empty() ? "" : " (" + server.state().error + ")");
      return rr;
    }
    server.restart();
    recording = true;
    res = tr.run();
  }
  if (!res.error.empty()) {
    rr.error = res.error;
    return rr;
  }
  rr.run = res.run;
  rr.final_regs = res.final_regs;
  for (const MemWrite &w : res.writes) {
    if (w.protocol || tr.is_engine_address(w.addr)) continue;
    if (tr.is_engine_address(w.pc) && !tr.is_cache_address(w.pc)) continue;
    // Mapped when it was made: a later reclaim of its epoch (a long call
    // fills the cache) forgets the cache pc.
    const uint64_t orig = w.mapped_pc;
    if (orig == 0) continue;
    MemWrite m = w;
    m.pc = orig;
    rr.writes.push_back(m);
  }
  rr.served = server.state();
  // The invocation may end in blocks that are only a transfer (a lone
  // `ret` or `jmp __x86_return_thunk`): no cache pc maps to them and no
  // successor follows; reaching the sentinel proves they ran.
  if (res.run.reason == StopReason::kSentinel)
    while (rr.served.blocks < log.blocks.size() && first_copied_pc(aug, log.blocks[rr.served.blocks]) == 0 &&
           log.blocks.size() - rr.served.blocks <= 8)
      rr.served.blocks++;
  rr.insns = res.run.insns;
  rr.flushes = res.stats.flushes;
  if (tool) rr.tool_result = tool->report();
  if (tool && tool->differences && reference && res.run.reason == StopReason::kSentinel)
    rr.tool_differences = tool->differences(*reference);
  rr.seconds = seconds_since(t0);
  return rr;
}

// Runs `fn` on the capture augmented with `pages`, adding the page of each
// write fault and starting again.
template <typename Fn>
ReplayRun with_scratch(const Capture &cap, std::set<uint64_t> *pages, uint32_t max_restarts, uint32_t *restarts,
                       Fn fn) {
  for (;;) {
    Capture aug;
    ReplayRun rr;
    std::string err = augment(cap, *pages, &aug);
    if (!err.empty()) {
      rr.error = "scratch pages: " + err;
      return rr;
    }
    rr = fn(aug);
    uint64_t page;
    if (!rr.error.empty() || !write_fault(rr.run, &page) || pages->count(page) || *restarts >= max_restarts)
      return rr;
    pages->insert(page);
    (*restarts)++;
  }
}

std::string describe_write(const MemWrite &w) {
  return std::to_string(w.size) + " bytes " + hex(w.value) + " at " + hex(w.addr) + " (pc " + hex(w.pc) + ")";
}

// "" when the two runs' program-visible effects are equal.  `c_entry`: the
// entry is a compiled C function, whose caller reads neither the scratch
// registers but rax and rdx nor the arithmetic flags after it returns: the
// engine's ABI return sites and the instrumentation before such a return
// may leave them changed (kjit_os_c_abi_return, c_return.h), as
// the kernel's own callers allow.
std::string compare_runs(const ReplayRun &a, const ReplayRun &b, bool c_entry) {
  for (size_t i = 0; i < std::min(a.writes.size(), b.writes.size()); i++) {
    const MemWrite &x = a.writes[i], &y = b.writes[i];
    if (x.addr != y.addr || x.size != y.size || x.value != y.value)
      return "write #" + std::to_string(i) + ": original " + describe_write(x) + ", " + b.what + " " +
             describe_write(y);
  }
  if (a.writes.size() != b.writes.size())
    return "original made " + std::to_string(a.writes.size()) + " writes, " + b.what + " " +
           std::to_string(b.writes.size());
  for (int r = 0; r < 16; r++)
    if (a.final_regs.gpr[r] != b.final_regs.gpr[r] && !(c_entry && dead_after_c_return(r)))
      return std::string("final ") + kRegNames[r] + ": original " + hex(a.final_regs.gpr[r]) + ", " + b.what +
             " " + hex(b.final_regs.gpr[r]);
  if (!c_entry && (a.final_regs.rflags & kArith) != (b.final_regs.rflags & kArith))
    return "final arithmetic flags differ: original " + hex(a.final_regs.rflags & kArith) + ", " + b.what + " " +
           hex(b.final_regs.rflags & kArith);
  return "";
}

void check_run(const ReplayRun &rr, const ReplayLog &log, std::vector<std::string> *problems) {
  if (!rr.error.empty()) {
    problems->push_back(rr.what + ": " + rr.error);
    return;
  }
  if (rr.run.reason != StopReason::kSentinel) {
    std::string m = rr.what + " run: " + stop_reason_name(rr.run.reason) +
                    (rr.run.message.empty() ? "" : " (" + rr.run.message + ")");
    if (read_fault(rr.run) && rr.served.reads == log.reads.size())
      m += "; the read log is exhausted (" + std::to_string(log.reads.size()) + " reads)";
    else if (read_fault(rr.run) && rr.served.reads < log.reads.size())
      m += "; next logged read is " + hex(log.reads[rr.served.reads].addr) + " at pc " +
           hex(log.reads[rr.served.reads].pc);
    problems->push_back(m);
    return;
  }
  if (rr.served.blocks != log.blocks.size())
    problems->push_back(rr.what + ": block sequence differs from the recording after block " +
                        std::to_string(rr.served.blocks) + " of " + std::to_string(log.blocks.size()) +
                        (rr.served.blocks < log.blocks.size()
                             ? " (expected " + hex(log.blocks[rr.served.blocks].pc) + ")"
                             : std::string()));
  if (rr.served.reads != log.reads.size())
    problems->push_back(rr.what + ": " + std::to_string(rr.served.reads) + " of " +
                        std::to_string(log.reads.size()) + " logged reads were made");
  if (rr.served.resumes != log.resumes.size())
    problems->push_back(rr.what + ": " + std::to_string(rr.served.resumes) + " of " +
                        std::to_string(log.resumes.size()) + " sleeps were resumed");
  if (rr.served.nondets != log.nondets.size())
    problems->push_back(rr.what + ": " + std::to_string(rr.served.nondets) + " of " +
                        std::to_string(log.nondets.size()) + " non-deterministic results were used");
}

std::string kernel_value(const std::string &tool, const Capture &cap, const ReplayLog &log) {
  if (tool == "icount") return std::to_string(log.kernel_icount());
  if (tool == "bbcount") return std::to_string(kernel_blocks(cap, log));
  if (tool == "calltrace") return format_call_trace(log.kernel_call_trace());
  return "";
}

}  // namespace

// bbcount's count in the kernel: the logged blocks whose last instruction
// ends a counted block (kjit_cf_ends_block); a block the engine cut at its
// size limit is counted with its continuation.  Decoded from the capture's
// code, so files written before BLOCKS had its cut flag count the same
// way; the flag decides only for a block whose code is missing.
uint64_t kernel_blocks(const Capture &cap, const ReplayLog &log) {
  uint64_t n = 0;
  for (const LoggedBlock &b : log.blocks) {
    uint64_t at = b.pc;
    x86::Insn in;
    bool decoded = true;
    for (uint32_t i = 0; i < b.ninsns && decoded; i++) {
      decoded = decode_captured(cap, at, &in);
      at += in.length;
    }
    n += decoded ? x86::ends_counted_block(in) : !(b.flags & KJIT_CAPF_BLOCK_CUT);
  }
  return n;
}

std::string replay_capture(const Capture &cap, const ReplayLog &log, const ReplayOptions &opt,
                           ReplayReport *report) {
  *report = ReplayReport{};
  if (!log.present) return "the capture has no replay log (MEMREAD/NONDET/BLOCKS/KRESULT): not a kernel capture";
  const SymbolTable syms = replay_symbols(cap, log, opt.kallsyms);
  ThunkMap thunks;
  if (!syms.empty()) thunks = ThunkMap(syms);

  std::set<uint64_t> pages;
  const std::string pages_err = logged_read_pages(cap, log, &pages);
  if (!pages_err.empty()) return pages_err;

  ReplayReport &rep = *report;
  rep.original = with_scratch(cap, &pages, opt.max_restarts, &rep.restarts, [&](const Capture &aug) {
    return run_original(aug, log, thunks, syms.address_of("__schedule"), opt, &rep.reference);
  });
  // A warm replay's tools count the run that built the cache as well.
  const ReferenceCounts reference = opt.warm ? repeated(rep.reference, 2) : rep.reference;
  for (const std::string &name : opt.tools) {
    const Tool *tool = name.empty() || name == "none" ? nullptr : find_tool(name);
    if (!tool && !(name.empty() || name == "none")) return "unknown tool " + name;
    rep.translated.push_back(with_scratch(cap, &pages, opt.max_restarts, &rep.restarts, [&](const Capture &aug) {
      return run_translated(aug, log, syms.empty() ? nullptr : &syms, tool,
                            rep.original.run.reason == StopReason::kSentinel ? &reference : nullptr, opt);
    }));
    if (tool) {
      ToolCheck c;
      c.tool = name;
      if (!opt.warm) c.kernel = kernel_value(name, cap, log);  // one invocation's
      c.original = tool->reference(reference);
      c.translated = rep.translated.back().tool_result;
      rep.tools.push_back(c);
    }
  }
  if (opt.tools.empty())
    rep.translated.push_back(with_scratch(cap, &pages, opt.max_restarts, &rep.restarts, [&](const Capture &aug) {
      return run_translated(aug, log, syms.empty() ? nullptr : &syms, nullptr, nullptr, opt);
    }));
  rep.scratch_pages = pages.size();

  if (log.kernel.end == EndReason::kSlept && log.resumes.empty())
    rep.problems.push_back("the invocation slept in the scheduler, and the capture has no RESUME records "
                           "(recorded by a module without them): slept, not replayable");
  else if (log.kernel.end != EndReason::kReturned && log.kernel.end != EndReason::kSlept)
    rep.problems.push_back(std::string("the capture is incomplete: the invocation ended with ") +
                           end_reason_name(log.kernel.end) + " in the kernel");
  check_run(rep.original, log, &rep.problems);
  const bool c_entry = in_c_function(cap, syms, syms.address_of("__fentry__"), cap.entry_pc);
  for (const ReplayRun &t : rep.translated) {
    check_run(t, log, &rep.problems);
    if (t.error.empty() && t.run.reason == StopReason::kSentinel &&
        rep.original.run.reason == StopReason::kSentinel) {
      const std::string d = compare_runs(rep.original, t, c_entry);
      if (!d.empty()) rep.problems.push_back(d);
    }
  }
  for (const ReplayRun &t : rep.translated)
    if (!t.tool_differences.empty()) rep.problems.push_back(t.what + ": per block: " + t.tool_differences);
  for (const ToolCheck &c : rep.tools) {
    if (c.original != c.translated)
      rep.problems.push_back("tool " + c.tool + ": original run " + c.original + ", translated " + c.translated);
    if (!c.kernel.empty() && c.kernel != c.translated)
      rep.problems.push_back("tool " + c.tool + ": kernel " + c.kernel + ", replay " + c.translated);
  }
  rep.ok = rep.problems.empty();
  return "";
}

std::string ReplayReport::text() const {
  std::ostringstream o;
  o << (ok ? "REPLAY OK" : "REPLAY FAILED") << "\n";
  auto line = [&o](const ReplayRun &r) {
    o << "  " << r.what << ": " << stop_reason_name(r.run.reason) << ", " << r.insns << " insns, "
      << r.served.blocks << " blocks matched, " << r.served.reads << " reads served, " << r.served.nondets
      << " nondet, " << (r.served.resumes ? std::to_string(r.served.resumes) + " sleeps resumed, " : "")
      << r.writes.size() << " writes, rax " << hex(r.final_regs.gpr[KJIT_REG_RAX]) << ", "
      << (r.flushes ? std::to_string(r.flushes) + " cache flushes, " : "") << static_cast<uint64_t>(r.seconds * 1e6)
      << " us\n";
  };
  line(original);
  for (const ReplayRun &t : translated) line(t);
  for (const ToolCheck &c : tools)
    o << "  tool " << c.tool << ": kernel " << (c.kernel.empty() ? "-" : c.kernel) << " | original " << c.original
      << " | translated " << c.translated << (c.ok() || (c.kernel.empty() && c.original == c.translated) ? "" : "  MISMATCH")
      << "\n";
  o << "  scratch pages " << scratch_pages << ", restarts " << restarts << "\n";
  for (const std::string &p : problems) o << "  problem: " << p << "\n";
  return o.str();
}

}  // namespace kjit::sim
