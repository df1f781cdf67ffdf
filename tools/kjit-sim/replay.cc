// SPDX-License-Identifier: GPL-2.0
#include "replay.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "arch/x86/decoder.h"
#include "c_functions.h"
#include "c_return.h"
#include "arch/x86/mnemonic.h"
#include "sim_shim.h"
#include "thunks.h"
#include "tool_registry.h"
#include "translated_runner.h"

namespace kjit::sim {
namespace {

const char *const kRegNames[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                   "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
constexpr uint64_t kArith = 0x8d5;

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Where a logged read goes in the replay: GS/FS-relative reads at the
// capture's base (the task may have migrated while the kernel ran it).
uint64_t read_address(const LoggedRead &r, const Capture &cap) {
  if (r.segment() == 5) return r.ea + cap.regs.gs_base;
  if (r.segment() == 4) return r.ea + cap.regs.fs_base;
  return r.addr;
}

const x86::Decoder &engine_decoder() {
  static const x86::Decoder decoder = [] {
    x86::Decoder d;
    d.init(nullptr);  // thunks change no class this file asks about
    return d;
  }();
  return decoder;
}

// The instruction at `pc`, decoded by the engine's decoder from the
// emulator's memory.
bool decode_at(const Emulator &emu, uint64_t pc, x86::Insn *in) {
  uint8_t b[15];
  uint32_t n = 0;
  while (n < sizeof b && emu.read(pc + n, b + n, 1)) n++;
  return n > 0 && engine_decoder().decode(pc, b, n, in) == x86::DecodeStatus::kOk;
}

// ... and from the capture's code.
bool decode_at(const Capture &cap, uint64_t pc, x86::Insn *in) {
  const Region *r = cap.find_region(pc);
  if (!r) return false;
  const uint64_t off = pc - r->addr;
  const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(15, r->bytes.size() - off));
  return engine_decoder().decode(pc, r->bytes.data() + off, n, in) == x86::DecodeStatus::kOk;
}

// Where a logged block's translation shows in the code cache: the pc of
// its first copied instruction (the engine copies no NOP), 0 when it has
// none (only a transfer, after NOPs or not).
uint64_t first_copied_pc(const Capture &cap, const LoggedBlock &blk) {
  uint64_t pc = blk.pc;
  for (uint32_t i = 0; i + 1 < blk.ninsns; i++) {
    x86::Insn in{};
    if (!decode_at(cap, pc, &in)) return pc;
    if (!in.is_nop) return pc;
    pc += in.length;
  }
  return 0;
}

// The GPR a capture logged as the result of the non-deterministic
// instruction at `pc`, or -1 when the bytes there are not one.  The
// engine's decoder decides, as it did for the capture
// (kjit_insn_nondeterministic_reg).
// *length is the instruction's length: Unicorn passes a placeholder as the
// size of an instruction it cannot decode (xgetbv, rdrand without their
// CPUID bits).
int nondet_dest(const Emulator &emu, uint64_t pc, uint32_t *length = nullptr) {
  x86::Insn in;
  if (!decode_at(emu, pc, &in)) return -1;
  if (length) *length = in.length;
  return x86::nondet_result_reg(in);
}

std::string mnemonic_at(const Emulator &emu, uint64_t pc) {
  x86::Insn in;
  return decode_at(emu, pc, &in) ? x86::mnemonic_name(in.mnemonic) : "?";
}


// How many READ records one execution of the instruction at `pc` makes
// (os/linux/capture.c): two for cmps (both sources), none for a rep
// string instruction with rcx = 0, else one.  The same instruction may run
// again before any other read (a lock released twice in a row): each run
// takes its own records, in order.
uint32_t reads_per_execution(const Emulator &emu, uint64_t pc) {
  x86::Insn in;
  if (!decode_at(emu, pc, &in)) return 1;
  bool string = false, cmps = false;
  switch (in.mnemonic) {
    case ZYDIS_MNEMONIC_CMPSB: case ZYDIS_MNEMONIC_CMPSW: case ZYDIS_MNEMONIC_CMPSD: case ZYDIS_MNEMONIC_CMPSQ:
      cmps = true;
      string = true;
      break;
    case ZYDIS_MNEMONIC_MOVSB: case ZYDIS_MNEMONIC_MOVSW: case ZYDIS_MNEMONIC_MOVSD: case ZYDIS_MNEMONIC_MOVSQ:
    case ZYDIS_MNEMONIC_LODSB: case ZYDIS_MNEMONIC_LODSW: case ZYDIS_MNEMONIC_LODSD: case ZYDIS_MNEMONIC_LODSQ:
    case ZYDIS_MNEMONIC_SCASB: case ZYDIS_MNEMONIC_SCASW: case ZYDIS_MNEMONIC_SCASD: case ZYDIS_MNEMONIC_SCASQ:
      string = true;
      break;
    default:
      break;
  }
  // movsd and cmpsd are also SSE2 mnemonics, escaped by 0F.
  if (string && std::find(in.bytes, in.bytes + in.length, 0x0f) != in.bytes + in.length) return 1;
  if (string && (in.prefixes & (x86::kPrefixRep | x86::kPrefixRepne)) && emu.gpr(KJIT_REG_RCX) == 0) return 0;
  return cmps ? 2 : 1;
}

// True for the instructions whose memory operand is only an address: the
// multi-byte nop (`nopl 0x0(%rax,%rax,1)`, the fentry site) and prefetches.
// A capture may log them (the engine reports a memory operand); nothing is
// read.
bool address_only_at(const Emulator &emu, uint64_t pc) {
  uint8_t b[15];
  uint32_t n = 0;
  while (n < sizeof b && emu.read(pc + n, b + n, 1)) n++;
  uint32_t i = 0;
  while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x3e ||
                   b[i] == 0x26 || b[i] == 0x36 || b[i] == 0x64 || b[i] == 0x65))
    i++;
  if (i < n && (b[i] & 0xf0) == 0x40) i++;
  return i + 1 < n && b[i] == 0x0f && (b[i + 1] == 0x1f || b[i + 1] == 0x18 || b[i + 1] == 0x0d);
}

// The target of a direct `call rel32` at `pc`, or 0.
uint64_t direct_call_target(const Emulator &emu, uint64_t pc, uint32_t size) {
  uint8_t b[5];
  if (size != 5 || !emu.read(pc, b, 5) || b[0] != 0xe8) return 0;
  int32_t rel;
  memcpy(&rel, b + 1, 4);
  return pc + 5 + static_cast<int64_t>(rel);
}

// Serves the log to one run.  `to_orig` maps an executing pc to the
// original instruction's pc (0: not program code).
class LogServer {
 public:
  // `translated`: pcs are code-cache pcs; a block start only counts at the
  // copy of the original instruction (exit stubs map to the next original
  // pc too).
  LogServer(const Capture &cap, const ReplayLog &log, std::function<uint64_t(uint64_t)> to_orig, bool translated)
      : cap_(cap), log_(log), to_orig_(std::move(to_orig)), translated_(translated) {}

  // The scheduler funnel (0: unknown), to name a sleep the log lacks.
  void set_funnel(uint64_t funnel) { funnel_ = funnel; }
  // Told the funnel's address when the original run skips a call into it.
  void on_sleep(std::function<void(uint64_t target)> fn) { on_sleep_ = std::move(fn); }

  // The translated run's scheduler gate, [rsp] = the return address: the
  // next RESUME record's registers; returns where to continue, or 0 after
  // failing the run.
  uint64_t resume_at_gate(Emulator &emu) {
    const uint64_t sp = emu.gpr(KJIT_REG_RSP);
    uint64_t ret = 0;
    if (!emu.read_u64(sp, &ret)) {
      problem(emu, emu.rip(), "scheduler gate: stack unreadable");
      return 0;
    }
    if (!take_resume(emu, ret, sp + 8)) return 0;
    emu.mark_protocol_write(sp);  // the call's return address: the original run skips the call
    return ret;
  }

  void attach(Emulator &emu) {
    emu.add_code_hook(1, ~uint64_t{0}, [this](Emulator &e, uint64_t pc, uint32_t size) { on_insn(e, pc, size); });
  }
  const ServeState &state() const { return st_; }
  // Serves the log from its start again (a second run of the same code).
  void restart() {
    last_orig_ = last_block_ = 0;
    flags_pending_ = false;
    flags_pc_ = flags_value_ = 0;
    st_ = ServeState{};
  }

 private:
  void problem(Emulator &emu, uint64_t pc, const std::string &why) {
    if (st_.error.empty()) st_.error = why;
    emu.fail(pc, why);
  }

  // Writes a logged read's bytes where the instruction reads them, but
  // the sentinel: the slot of the entry's return address holds it in the
  // replay (both runs push it below the captured rsp), and a function that
  // reads its own return address (a realigned frame's prologue copies it:
  // `push -0x8(%r10)`) logged the kernel's, which would send the final
  // ret back into the caller.
  bool place_read(Emulator &emu, uint64_t at, const std::vector<uint8_t> &bytes) {
    const uint64_t slot = cap_.regs.gpr[KJIT_REG_RSP] - 8, end = at + bytes.size();
    if (end <= slot || at >= slot + 8) return emu.write(at, bytes.data(), bytes.size());
    if (at < slot && !emu.write(at, bytes.data(), slot - at)) return false;
    if (end > slot + 8 && !emu.write(slot + 8, bytes.data() + (slot + 8 - at), end - (slot + 8))) return false;
    return true;
  }

  // Whether the instruction at `pc` (original or cache pc) is one a
  // capture logs as NONDET; decoded once per pc.
  bool is_nondet(const Emulator &emu, uint64_t pc) {
    auto it = nondet_at_.find(pc);
    if (it == nondet_at_.end()) it = nondet_at_.emplace(pc, nondet_dest(emu, pc) >= 0).first;
    return it->second;
  }

  void on_insn(Emulator &emu, uint64_t pc, uint32_t size) {
    // The flags a NONDET record gave the instruction before this one (a
    // deterministic read of per-CPU memory, see below), now that it ran.
    if (flags_pending_ && pc != flags_pc_) {
      flags_pending_ = false;
      emu.set_rflags((emu.rflags() & ~kArithFlags) | (flags_value_ & kArithFlags));
      emu.rerun_instruction();
      return;
    }
    const uint64_t orig = to_orig_(pc);
    if (orig == 0) return;
    // A rep-prefixed instruction re-runs its pc per iteration, and one
    // original instruction may become several cache instructions: the log
    // is served once, at the first.
    const bool first = orig != last_orig_;
    last_orig_ = orig;
    if (st_.blocks < log_.blocks.size() && orig != last_block_) {
      const size_t b = st_.blocks;
      // In the code cache a block shows at its first copied instruction; one
      // that is only a transfer (a lone `ret` or `jmp`, after NOPs or not)
      // has none: no cache pc maps to it.  Its successor proves it ran.
      auto shows_at = [&](size_t k) { return translated_ ? first_copied_pc(cap_, log_.blocks[k]) : log_.blocks[k].pc; };
      size_t k = b;
      if (translated_)
        while (k < log_.blocks.size() && k - b < 8 && shows_at(k) != orig && shows_at(k) == 0) k++;
      if (k < log_.blocks.size() && shows_at(k) == orig) {
        st_.blocks = k + 1;
        last_block_ = orig;
      }
    }
    if (orig != last_block_) last_block_ = 0;
    if (first) {
      uint32_t n = 0;
      const uint32_t per_run = reads_per_execution(emu, pc);
      while (n++ < per_run && st_.reads < log_.reads.size() && log_.reads[st_.reads].pc == orig) {
        const LoggedRead &r = log_.reads[st_.reads];
        if ((r.flags & kReadFailed) && address_only_at(emu, pc)) {
          st_.reads++;
          continue;
        }
        if (r.flags & kReadFailed)
          return problem(emu, pc, "the read at " + hex(orig) + " faulted in the kernel (exception-table "
                                  "fixup): not replayable");
        if (!place_read(emu, read_address(r, cap_), r.bytes))
          return problem(emu, pc, "cannot place logged read of " + hex(read_address(r, cap_)));
        st_.reads++;
      }
    }
    if (!translated_ && first && sleep_at(emu, orig, pc, size)) return;
    const bool logged_nondet = st_.nondets < log_.nondets.size() && log_.nondets[st_.nondets].pc == orig;
    if (!logged_nondet && is_nondet(emu, pc))
      return problem(emu, pc, mnemonic_at(emu, pc) + " at " + hex(orig) + " has a result the replay cannot "
                              "compute and the capture logged none for it (" +
                              (st_.nondets < log_.nondets.size()
                                   ? "the next NONDET record is for " + hex(log_.nondets[st_.nondets].pc)
                                   : std::to_string(log_.nondets.size()) + " NONDET records, all used") +
                              "; a module that did not record this instruction made the capture)");
    if (logged_nondet) {
      uint32_t length = 0;
      const int dest = nondet_dest(emu, pc, &length);
      if (dest < 0) {
        // A record at an instruction the replay computes: one that read
        // per-CPU memory without loading it into a register, logged for
        // the flags it left (an interrupt can change the word between the
        // READ and the instruction).  It runs; its arithmetic flags are
        // then the kernel's.  Else: not the instruction itself
        // (instrumentation around a non-deterministic one).
        if (first && !is_nondet(emu, orig) && (pc == orig || is_copy(emu, pc, orig))) {
          flags_value_ = log_.nondets[st_.nondets++].rflags;
          flags_pc_ = pc;
          flags_pending_ = true;
        }
        return;
      }
      const LoggedNondet &n = log_.nondets[st_.nondets++];
      emu.set_gpr(KJIT_REG_RCX, n.rcx);
      emu.set_gpr(KJIT_REG_RDX, n.rdx);
      emu.set_gpr(KJIT_REG_RBX, n.rbx);
      emu.set_gpr(dest, n.dest);
      emu.set_rflags(n.rflags);
      emu.set_rip(pc + length);
    }
  }

  // The original run at a call: the next sleep's, or a call into the
  // funnel with no record left.  True when the run continues elsewhere.
  bool sleep_at(Emulator &emu, uint64_t orig, uint64_t pc, uint32_t size) {
    const bool logged = st_.resumes < log_.resumes.size() && log_.resumes[st_.resumes].pc == orig;
    if (!logged) {
      if (funnel_ && direct_call_target(emu, pc, size) == funnel_)
        problem(emu, pc, "a call into the scheduler at " + hex(orig) + " and " +
                             (st_.resumes < log_.resumes.size()
                                  ? "the next RESUME record is for the call at " + hex(log_.resumes[st_.resumes].pc)
                                  : "no RESUME record left (" + std::to_string(log_.resumes.size()) +
                                        " sleeps logged)"));
      return false;
    }
    const uint64_t target = log_.resumes[st_.resumes].target, ret = log_.resumes[st_.resumes].ret;
    const uint64_t sp = emu.gpr(KJIT_REG_RSP);
    if (!take_resume(emu, ret, sp)) return true;
    // What the call pushed, where the kernel's stack had it (not a
    // program write: the translated run's push is the gate's protocol).
    emu.write(sp - 8, &ret, 8);
    emu.set_rip(ret);
    if (on_sleep_) on_sleep_(target);
    return true;
  }

  // Sets the registers of the next RESUME record, which must continue at
  // `ret` with rsp `sp` (the stack as after the call's return).
  bool take_resume(Emulator &emu, uint64_t ret, uint64_t sp) {
    if (st_.resumes >= log_.resumes.size()) {
      problem(emu, emu.rip(), "a sleep returning to " + hex(ret) + " and no RESUME record left");
      return false;
    }
    const LoggedResume &r = log_.resumes[st_.resumes];
    if (r.ret != ret || r.gpr[KJIT_REG_RSP] != sp) {
      problem(emu, emu.rip(), "RESUME record " + std::to_string(st_.resumes) + " continues at " + hex(r.ret) +
                                  " with rsp " + hex(r.gpr[KJIT_REG_RSP]) + ", the run sleeps returning to " +
                                  hex(ret) + " with rsp " + hex(sp));
      return false;
    }
    st_.resumes++;
    // The GS base stays the run's: GS-relative reads after the wake-up are
    // served at their offset from it (read_address), as before the sleep.
    for (int g = 0; g < 16; g++) emu.set_gpr(g, r.gpr[g]);
    emu.set_rflags(r.rflags);
    return true;
  }

  bool is_copy(const Emulator &emu, uint64_t pc, uint64_t orig) const {
    uint8_t a[2], b[2];
    const Region *r = cap_.find_region(orig);
    if (!r || orig + 2 > r->end() || !emu.read(pc, a, 2)) return false;
    memcpy(b, r->bytes.data() + (orig - r->addr), 2);
    return a[0] == b[0] && a[1] == b[1];
  }

  const Capture &cap_;
  const ReplayLog &log_;
  std::function<uint64_t(uint64_t)> to_orig_;
  bool translated_;
  uint64_t funnel_ = 0;
  std::function<void(uint64_t)> on_sleep_;
  uint64_t last_orig_ = 0, last_block_ = 0;
  // CF, PF, AF, ZF, SF, OF: what a flags-only NONDET record sets.
  static constexpr uint64_t kArithFlags = 0x8d5;
  bool flags_pending_ = false;
  uint64_t flags_pc_ = 0, flags_value_ = 0;
  std::unordered_map<uint64_t, bool> nondet_at_;
  ServeState st_;
};

// The capture plus zero rw- pages for every logged read and every scratch
// page, outside the captured regions.
std::string augment(const Capture &cap, const std::set<uint64_t> &pages, Capture *out) {
  *out = cap;
  for (uint64_t p : pages) {
    uint64_t at = p;
    const uint64_t end = p + kPageSize;  // 0 for the last page: not used by kernels
    if (end == 0) return "page " + hex(p) + " at the end of the address space";
    while (at < end) {
      const Region *r = cap.find_region(at);
      if (r) {
        at = std::min(end, r->end());
        continue;
      }
      // gap until the next region start
      uint64_t next = end;
      for (const Region &q : cap.regions)
        if (q.addr > at && q.addr < next) next = q.addr;
      Region z;
      z.addr = at;
      z.perms = kPermR | kPermW;
      z.bytes.assign(next - at, 0);
      out->regions.push_back(std::move(z));
      at = next;
    }
  }
  std::sort(out->regions.begin(), out->regions.end(), [](const Region &a, const Region &b) { return a.addr < b.addr; });
  // Adjacent zero pages are fine as separate regions; validate the result.
  return validate_capture(*out);
}

bool write_fault(const RunResult &r, uint64_t *page) {
  if (r.reason != StopReason::kFault || r.message.rfind("write to unmapped", 0) != 0) return false;
  *page = page_down(r.fault_addr);
  return true;
}

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

// The functions the kernel called outside the code cache, other than the
// scheduler funnel: the RESUME records' other targets.
std::vector<uint64_t> native_calls(const ReplayLog &log, const SymbolTable *syms) {
  const uint64_t funnel = syms ? syms->address_of("__schedule") : 0;
  std::set<uint64_t> t;
  for (const LoggedResume &r : log.resumes)
    if (r.target != funnel) t.insert(r.target);
  return {t.begin(), t.end()};
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
      decoded = decode_at(cap, at, &in);
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
  SymbolTable syms;
  for (const SymbolTable::Sym &s : log.symbols) syms.add(s.addr, s.name);
  if (opt.kallsyms) {
    const CaptureKaslr kaslr = capture_kaslr(cap);
    for (const SymbolTable::Sym &s : opt.kallsyms->all()) {
      const uint64_t at = s.addr + kaslr.offset;  // modules' symbols are where they were loaded
      if (!kaslr.offset || (at >= kaslr.image_lo && at < kaslr.image_hi)) syms.add(at, s.name);
    }
  }
  syms.finalize();
  ThunkMap thunks;
  if (!syms.empty()) thunks = ThunkMap(syms);

  std::set<uint64_t> pages;
  for (const LoggedRead &r : log.reads) {
    if (r.flags & kReadFailed) continue;
    const uint64_t a = read_address(r, cap);
    for (uint64_t p = page_down(a); p <= page_down(a + r.bytes.size() - 1); p += kPageSize) pages.insert(p);
  }
  if (pages.count(page_down(cap.sentinel))) return "a logged read hits the sentinel page";

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
