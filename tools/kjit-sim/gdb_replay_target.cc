// SPDX-License-Identifier: GPL-2.0
#include "gdb_replay_target.h"
#include "hex_text.h"

#include <algorithm>
#include <cstring>

#include "log_server.h"

namespace kjit::sim {
namespace {

using gdb::Stop;

std::string bare_hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// gdb's amd64 register order (rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp,
// r8..r15) to the hardware order the emulator uses.
constexpr int kGprOfGdb[16] = {KJIT_REG_RAX, KJIT_REG_RBX, KJIT_REG_RCX, KJIT_REG_RDX, KJIT_REG_RSI, KJIT_REG_RDI,
                               KJIT_REG_RBP, KJIT_REG_RSP, 8, 9, 10, 11, 12, 13, 14, 15};
constexpr unsigned kGdbRsp = 7, kGdbRbp = 6;
constexpr uint32_t kKernelCs = 0x10, kKernelDs = 0x18;  // __KERNEL_CS, __KERNEL_DS
constexpr uint64_t kArithFlags = 0x8d5;

gdb::RegisterValue value(uint64_t v, uint32_t size) {
  gdb::RegisterValue r;
  r.size = size;
  memcpy(r.bytes, &v, std::min<uint32_t>(size, 8));
  return r;
}

gdb::RegisterValue unavailable(uint32_t size) {
  gdb::RegisterValue r;
  r.size = size;
  r.available = false;
  return r;
}

// gdb's own amd64 GNU/Linux description (features/i386/64bit-core.xml,
// 64bit-sse.xml, 64bit-linux.xml, 64bit-segments.xml) in one document, so
// its register numbers are the ones registers() fills.
constexpr const char *kTargetXml = R"(<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target version="1.0">
<architecture>i386:x86-64</architecture>
<osabi>GNU/Linux</osabi>
<feature name="org.gnu.gdb.i386.core">
<flags id="i386_eflags" size="4">
<field name="CF" start="0" end="0"/><field name="" start="1" end="1"/><field name="PF" start="2" end="2"/>
<field name="AF" start="4" end="4"/><field name="ZF" start="6" end="6"/><field name="SF" start="7" end="7"/>
<field name="TF" start="8" end="8"/><field name="IF" start="9" end="9"/><field name="DF" start="10" end="10"/>
<field name="OF" start="11" end="11"/><field name="NT" start="14" end="14"/><field name="RF" start="16" end="16"/>
<field name="VM" start="17" end="17"/><field name="AC" start="18" end="18"/><field name="VIF" start="19" end="19"/>
<field name="VIP" start="20" end="20"/><field name="ID" start="21" end="21"/>
</flags>
<reg name="rax" bitsize="64" type="int64"/><reg name="rbx" bitsize="64" type="int64"/>
<reg name="rcx" bitsize="64" type="int64"/><reg name="rdx" bitsize="64" type="int64"/>
<reg name="rsi" bitsize="64" type="int64"/><reg name="rdi" bitsize="64" type="int64"/>
<reg name="rbp" bitsize="64" type="data_ptr"/><reg name="rsp" bitsize="64" type="data_ptr"/>
<reg name="r8" bitsize="64" type="int64"/><reg name="r9" bitsize="64" type="int64"/>
<reg name="r10" bitsize="64" type="int64"/><reg name="r11" bitsize="64" type="int64"/>
<reg name="r12" bitsize="64" type="int64"/><reg name="r13" bitsize="64" type="int64"/>
<reg name="r14" bitsize="64" type="int64"/><reg name="r15" bitsize="64" type="int64"/>
<reg name="rip" bitsize="64" type="code_ptr"/><reg name="eflags" bitsize="32" type="i386_eflags"/>
<reg name="cs" bitsize="32" type="int32"/><reg name="ss" bitsize="32" type="int32"/>
<reg name="ds" bitsize="32" type="int32"/><reg name="es" bitsize="32" type="int32"/>
<reg name="fs" bitsize="32" type="int32"/><reg name="gs" bitsize="32" type="int32"/>
<reg name="st0" bitsize="80" type="i387_ext"/><reg name="st1" bitsize="80" type="i387_ext"/>
<reg name="st2" bitsize="80" type="i387_ext"/><reg name="st3" bitsize="80" type="i387_ext"/>
<reg name="st4" bitsize="80" type="i387_ext"/><reg name="st5" bitsize="80" type="i387_ext"/>
<reg name="st6" bitsize="80" type="i387_ext"/><reg name="st7" bitsize="80" type="i387_ext"/>
<reg name="fctrl" bitsize="32" type="int" group="float"/><reg name="fstat" bitsize="32" type="int" group="float"/>
<reg name="ftag" bitsize="32" type="int" group="float"/><reg name="fiseg" bitsize="32" type="int" group="float"/>
<reg name="fioff" bitsize="32" type="int" group="float"/><reg name="foseg" bitsize="32" type="int" group="float"/>
<reg name="fooff" bitsize="32" type="int" group="float"/><reg name="fop" bitsize="32" type="int" group="float"/>
</feature>
<feature name="org.gnu.gdb.i386.sse">
<vector id="v4f" type="ieee_single" count="4"/><vector id="v2d" type="ieee_double" count="2"/>
<vector id="v16i8" type="int8" count="16"/><vector id="v8i16" type="int16" count="8"/>
<vector id="v4i32" type="int32" count="4"/><vector id="v2i64" type="int64" count="2"/>
<union id="vec128">
<field name="v4_float" type="v4f"/><field name="v2_double" type="v2d"/><field name="v16_int8" type="v16i8"/>
<field name="v8_int16" type="v8i16"/><field name="v4_int32" type="v4i32"/><field name="v2_int64" type="v2i64"/>
<field name="uint128" type="uint128"/>
</union>
<flags id="i386_mxcsr" size="4">
<field name="IE" start="0" end="0"/><field name="DE" start="1" end="1"/><field name="ZE" start="2" end="2"/>
<field name="OE" start="3" end="3"/><field name="UE" start="4" end="4"/><field name="PE" start="5" end="5"/>
<field name="DAZ" start="6" end="6"/><field name="IM" start="7" end="7"/><field name="DM" start="8" end="8"/>
<field name="ZM" start="9" end="9"/><field name="OM" start="10" end="10"/><field name="UM" start="11" end="11"/>
<field name="PM" start="12" end="12"/><field name="FZ" start="15" end="15"/>
</flags>
<reg name="xmm0" bitsize="128" type="vec128" regnum="40"/><reg name="xmm1" bitsize="128" type="vec128"/>
<reg name="xmm2" bitsize="128" type="vec128"/><reg name="xmm3" bitsize="128" type="vec128"/>
<reg name="xmm4" bitsize="128" type="vec128"/><reg name="xmm5" bitsize="128" type="vec128"/>
<reg name="xmm6" bitsize="128" type="vec128"/><reg name="xmm7" bitsize="128" type="vec128"/>
<reg name="xmm8" bitsize="128" type="vec128"/><reg name="xmm9" bitsize="128" type="vec128"/>
<reg name="xmm10" bitsize="128" type="vec128"/><reg name="xmm11" bitsize="128" type="vec128"/>
<reg name="xmm12" bitsize="128" type="vec128"/><reg name="xmm13" bitsize="128" type="vec128"/>
<reg name="xmm14" bitsize="128" type="vec128"/><reg name="xmm15" bitsize="128" type="vec128"/>
<reg name="mxcsr" bitsize="32" type="i386_mxcsr" group="vector"/>
</feature>
<feature name="org.gnu.gdb.i386.linux">
<reg name="orig_rax" bitsize="64" type="int" regnum="57"/>
</feature>
<feature name="org.gnu.gdb.i386.segments">
<reg name="fs_base" bitsize="64" type="int" regnum="58"/><reg name="gs_base" bitsize="64" type="int" regnum="59"/>
</feature>
</target>
)";

// Going backward, at the first instruction: gdb's end of the replay log.
Stop beginning() {
  Stop s;
  s.kind = Stop::Kind::kNoHistory;
  return s;
}

}  // namespace

GdbReplayTarget::GdbReplayTarget(ReplayCursor &cursor, const Capture &cap, const VmlinuxText *vmlinux,
                                 const SymbolTable *names)
    : cursor_(cursor), cap_(cap), vmlinux_(vmlinux), names_(names), known_(cap, cursor) {}

std::string GdbReplayTarget::target_xml() const { return kTargetXml; }

std::vector<gdb::RegisterValue> GdbReplayTarget::registers() {
  Emulator &emu = cursor_.emulator();
  std::vector<gdb::RegisterValue> v;
  v.reserve(kRegisterCount);
  for (int g = 0; g < 16; g++) v.push_back(value(emu.gpr(kGprOfGdb[g]), 8));
  v.push_back(value(emu.rip(), 8));
  // After a flags-only NONDET record the server sets the kernel's
  // arithmetic flags before the next instruction: show them already.
  uint64_t flags = emu.rflags(), arith = 0;
  if (cursor_.server().pending_flags(&arith)) flags = (flags & ~kArithFlags) | arith;
  v.push_back(value(flags, 4));
  v.push_back(value(kKernelCs, 4));
  v.push_back(value(kKernelDs, 4));
  for (int i = 0; i < 4; i++) v.push_back(unavailable(4));    // ds es fs gs
  for (int i = 0; i < 8; i++) v.push_back(unavailable(10));   // st0-st7
  for (int i = 0; i < 8; i++) v.push_back(unavailable(4));    // fctrl..fop
  for (int i = 0; i < 16; i++) v.push_back(unavailable(16));  // xmm0-15
  v.push_back(unavailable(4));                                // mxcsr
  v.push_back(unavailable(8));                                // orig_rax
  const Regs r = emu.regs();
  v.push_back(value(r.fs_base, 8));
  v.push_back(value(r.gs_base, 8));
  return v;
}

std::vector<unsigned> GdbReplayTarget::expedited_registers() const { return {kRip, kGdbRsp, kGdbRbp}; }

size_t GdbReplayTarget::read_memory(uint64_t addr, size_t len, uint8_t *out) {
  Emulator &emu = cursor_.emulator();
  const uint64_t pos = cursor_.position();
  size_t got = 0;
  while (got < len) {
    const uint64_t a = addr + got, left = len - got;
    if (a < addr) break;  // wrapped
    if (const uint64_t n = known_.known_prefix(a, left, pos)) {
      if (!emu.read(a, out + got, n)) break;
      got += n;
      continue;
    }
    if (cursor_.translated() && cursor_.is_engine_address(a) && emu.read(a, out + got, 1)) {
      got++;
      continue;
    }
    if (vmlinux_) {
      const size_t n = vmlinux_->read(a, out + got, known_.unknown_prefix(a, left, pos));
      if (n) {
        got += n;
        continue;
      }
    }
    break;
  }
  return got;
}

bool GdbReplayTarget::watched(const MemWrite &mw, uint64_t *hit) const {
  // In the translated view the engine's own code writes too (a gate's
  // saved registers): not the program's writes.
  if (cursor_.translated() && mw.mapped_pc == 0) return false;
  return watched(mw.addr, mw.size, hit);
}

bool GdbReplayTarget::watched(uint64_t addr, uint64_t size, uint64_t *hit) const {
  for (const Watch &w : watches_)
    if (addr < w.addr + w.len && w.addr < addr + size) {
      *hit = std::max(addr, w.addr);
      return true;
    }
  return false;
}

// A breakpoint at `pc`; in the translated view also one at the original
// instruction whose first cache instruction `pc` is (`last_orig`: the
// original of the instruction before).  gdb knows only the first kind as
// its breakpoint: the second stops as a plain SIGTRAP at the cache pc,
// which `monitor orig` relates to the breakpoint's address.
GdbReplayTarget::Hit GdbReplayTarget::breakpoint_at(uint64_t pc, uint64_t *last_orig) const {
  if (sw_.count(pc)) return Hit::kSoftware;
  if (hw_.count(pc)) return Hit::kHardware;
  if (!cursor_.translated()) return Hit::kNone;
  const uint64_t orig = cursor_.original_pc(pc);
  const bool entering = orig && orig != *last_orig;
  if (orig) *last_orig = orig;
  if (!entering) return Hit::kNone;
  if (sw_.count(orig) || hw_.count(orig)) return Hit::kCopy;
  for (const std::set<uint64_t> *set : {&sw_, &hw_})
    for (uint64_t b : *set)
      if (leads_to(b, orig)) return Hit::kCopy;
  return Hit::kNone;
}

// The engine copies no NOP and folds a direct jump into its target: a
// breakpoint on those stands for the first instruction it copies after
// them.
bool GdbReplayTarget::leads_to(uint64_t b, uint64_t orig) const {
  uint64_t at = b;
  for (int i = 0; i < 8 && at != orig; i++) {
    x86::Insn in{};
    if (!decode_captured(cap_, at, &in)) return false;
    if (in.is_nop) at += in.length;
    else if (in.cf == KJIT_CF_JMP) at = in.target;
    else return false;
  }
  return at == orig;
}

void GdbReplayTarget::hit_into(Hit h, Stop *s) {
  s->sw_breakpoint = h == Hit::kSoftware;
  s->hw_breakpoint = h == Hit::kHardware;
}

std::string GdbReplayTarget::describe(uint64_t pc) const {
  const std::string s = names_ ? names_->symbolize(pc) : "";
  return hex(pc) + (s.empty() ? "" : " <" + s + ">");
}

Stop GdbReplayTarget::stopped(Stop s) {
  if (cursor_.translated() && s.kind != Stop::Kind::kExited)
    s.extra.emplace_back("orig", bare_hex(cursor_.original_pc(cursor_.emulator().rip())));
  last_ = s;
  return s;
}

Stop GdbReplayTarget::failed(const std::string &why) {
  Stop s;
  s.signal = gdb::kSigSegv;
  s.console.push_back("kjit-sim: the replay cannot go on at instruction " + std::to_string(cursor_.position()) +
                      " of " + std::to_string(cursor_.end_position()) + " (pc " +
                      describe(cursor_.emulator().rip()) + "): " + why + "\n");
  return stopped(s);
}

// The end of the invocation: returned (exit) or could not go on.
Stop GdbReplayTarget::at_end() {
  const RunResult &e = cursor_.ending();
  if (e.reason != StopReason::kSentinel)
    return failed(std::string(stop_reason_name(e.reason)) + (e.message.empty() ? "" : ": " + e.message));
  const uint64_t rax = cursor_.emulator().gpr(KJIT_REG_RAX);
  Stop s;
  s.kind = Stop::Kind::kExited;
  s.exit_code = static_cast<uint32_t>(rax);
  char line[256];
  snprintf(line, sizeof line,
           "kjit-sim: %s returned rax = 0x%llx (%lld) after %llu instructions; the exit code is its low 32 bits\n",
           cap_.name.c_str(), static_cast<unsigned long long>(rax), static_cast<long long>(rax),
           static_cast<unsigned long long>(cursor_.end_position()));
  s.console.push_back(line);
  return stopped(s);
}

namespace {

// A cursor watcher made of two callbacks (either may be empty).
struct Callbacks : ReplayCursor::Watcher {
  std::function<bool(uint64_t, uint64_t)> on_before;
  std::function<bool(uint64_t, const MemWrite &)> on_write;
  bool before(uint64_t position, uint64_t pc) override { return on_before && on_before(position, pc); }
  bool wrote(uint64_t position, const MemWrite &w) override { return on_write && on_write(position, w); }
};

}  // namespace

Stop GdbReplayTarget::step(gdb::Direction d, const std::function<bool()> &interrupted) {
  const uint64_t pos = cursor_.position();
  if (d == gdb::Direction::kBackward) {
    if (pos == 0) return stopped(beginning());
    // The writes of the instruction stepped back over, for a watchpoint:
    // the tail of the write log the seek drops.
    const std::vector<MemWrite> &log = cursor_.emulator().writes();
    const size_t keep = std::min<size_t>(log.size(), 64), first = log.size() - keep;
    const std::vector<MemWrite> tail(log.end() - static_cast<long>(keep), log.end());
    const std::string err = cursor_.seek(pos - 1);
    if (!err.empty()) return failed(err);
    Stop s;
    for (size_t i = std::max(first, cursor_.emulator().writes().size()); i < first + keep; i++)
      if (!s.watch && watched(tail[i - first], &s.watch_addr)) s.watch = true;
    return stopped(s);
  }
  if (pos == cursor_.end_position()) return at_end();
  Stop s;
  Callbacks w;
  w.on_write = [&](uint64_t, const MemWrite &mw) { return watched(mw, &s.watch_addr); };
  switch (cursor_.run_to(pos + 1, &w, interrupted)) {
    case ReplayCursor::Outcome::kReached: return stopped(s);
    case ReplayCursor::Outcome::kWatched:
      s.watch = true;
      return stopped(s);
    case ReplayCursor::Outcome::kEnd: return at_end();
    case ReplayCursor::Outcome::kInterrupted: s.signal = gdb::kSigInt; return stopped(s);
    case ReplayCursor::Outcome::kError: break;
  }
  return failed(cursor_.error());
}

Stop GdbReplayTarget::resume(gdb::Direction d, const std::function<bool()> &interrupted) {
  if (d == gdb::Direction::kBackward) return reverse_continue(interrupted);
  const uint64_t start = cursor_.position();
  if (start == cursor_.end_position()) return at_end();
  Stop s;
  uint64_t last_orig = 0;
  Callbacks w;
  w.on_before = [&](uint64_t position, uint64_t pc) {
    const Hit hit = breakpoint_at(pc, &last_orig);
    if (hit == Hit::kNone || position == start) return false;
    hit_into(hit, &s);
    return true;
  };
  w.on_write = [&](uint64_t, const MemWrite &mw) {
    s.watch = s.watch || watched(mw, &s.watch_addr);
    return s.watch;
  };
  switch (cursor_.run_to(~uint64_t{0}, &w, interrupted)) {
    case ReplayCursor::Outcome::kReached: break;
    case ReplayCursor::Outcome::kWatched: return stopped(s);
    case ReplayCursor::Outcome::kEnd: return at_end();
    case ReplayCursor::Outcome::kInterrupted: {
      Stop i;
      i.signal = gdb::kSigInt;
      return stopped(i);
    }
    case ReplayCursor::Outcome::kError: return failed(cursor_.error());
  }
  return failed("the run stopped before the end with nothing to report");
}

// The last breakpoint or watched write before the current instruction:
// each interval between two checkpoints, latest first, is run again with
// every hit noted, and the first interval with one holds the answer.
Stop GdbReplayTarget::reverse_continue(const std::function<bool()> &interrupted) {
  const uint64_t now = cursor_.position();
  if (now == 0) return stopped(beginning());
  const std::vector<uint64_t> from = cursor_.checkpoint_positions();
  size_t k = from.size() - 1;
  while (k > 0 && from[k] >= now) k--;
  for (;;) {
    const uint64_t begin = from[k], end = k + 1 < from.size() ? std::min(from[k + 1], now) : now;
    std::string err = cursor_.seek(begin);
    if (!err.empty()) return failed(err);
    bool found = false;
    uint64_t at = 0, last_orig = 0;
    Stop hit;
    Callbacks w;
    w.on_before = [&](uint64_t position, uint64_t pc) {
      const Hit h = breakpoint_at(pc, &last_orig);
      if (h != Hit::kNone && position < now) {
        found = true;
        at = position;
        hit = Stop{};
        hit_into(h, &hit);
      }
      return false;
    };
    // Going backward a write is met before it is made: the stop is at the
    // instruction that writes.
    w.on_write = [&](uint64_t position, const MemWrite &mw) {
      uint64_t a = 0;
      if (position < now && watched(mw, &a)) {
        found = true;
        at = position;
        hit = Stop{};
        hit.watch = true;
        hit.watch_addr = a;
      }
      return false;
    };
    const ReplayCursor::Outcome o = cursor_.run_to(end, &w, interrupted);
    if (o == ReplayCursor::Outcome::kInterrupted) {
      Stop i;
      i.signal = gdb::kSigInt;
      return stopped(i);
    }
    if (o == ReplayCursor::Outcome::kError) return failed(cursor_.error());
    if (found) {
      err = cursor_.seek(at);
      return err.empty() ? stopped(hit) : failed(err);
    }
    if (k == 0) break;
    k--;
  }
  const std::string err = cursor_.seek(0);
  return err.empty() ? stopped(beginning()) : failed(err);
}

Stop GdbReplayTarget::current_stop() {
  if (last_.kind == Stop::Kind::kExited) return last_;
  Stop s = last_;
  s.console.clear();
  return s;
}

bool GdbReplayTarget::supports(gdb::PointKind k) const { return k <= gdb::PointKind::kWrite; }

bool GdbReplayTarget::insert_point(gdb::PointKind k, uint64_t addr, uint64_t len) {
  switch (k) {
    case gdb::PointKind::kSoftware: sw_.insert(addr); return true;
    case gdb::PointKind::kHardware: hw_.insert(addr); return true;
    case gdb::PointKind::kWrite:
      if (len == 0) return false;
      watches_.push_back(Watch{addr, len});
      return true;
    default: return false;
  }
}

bool GdbReplayTarget::remove_point(gdb::PointKind k, uint64_t addr, uint64_t len) {
  switch (k) {
    case gdb::PointKind::kSoftware: return sw_.erase(addr) > 0;
    case gdb::PointKind::kHardware: return hw_.erase(addr) > 0;
    case gdb::PointKind::kWrite:
      for (auto it = watches_.begin(); it != watches_.end(); ++it)
        if (it->addr == addr && it->len == len) {
          watches_.erase(it);
          return true;
        }
      return false;
    default: return false;
  }
}

std::string GdbReplayTarget::monitor(const std::string &command) {
  const uint64_t pc = cursor_.emulator().rip();
  if (command == "orig") {
    if (!cursor_.translated()) return "rip " + describe(pc) + " is original code (the replay is not --translated)\n";
    if (!cursor_.is_engine_address(pc)) return "rip " + describe(pc) + " is original code (kjit ran it natively)\n";
    const uint64_t orig = cursor_.original_pc(pc);
    if (!orig) return "rip " + hex(pc) + " is the engine's own code (a gate or a chain), no original instruction\n";
    return "rip " + hex(pc) + " in kjit's code cache is original " + describe(orig) + "\n";
  }
  if (command == "where") {
    const ServeState &st = cursor_.server().state();
    const RunResult &e = cursor_.ending();
    return "instruction " + std::to_string(cursor_.position()) + " of " + std::to_string(cursor_.end_position()) +
           " (the end: " +
           (e.reason == StopReason::kSentinel ? std::string("returned")
                                              : std::string(stop_reason_name(e.reason)) + ", " + e.message) +
           "); the log so far: " + std::to_string(st.blocks) + " blocks, " + std::to_string(st.reads) + " reads, " +
           std::to_string(st.nondets) + " nondet, " + std::to_string(st.resumes) + " sleeps\n";
  }
  const std::string help =
      "monitor orig    the original instruction of the translated pc (--translated)\n"
      "monitor where   the instruction count, the end, how much of the log is served\n";
  if (command == "help") return help;
  return "unknown monitor command '" + command + "'\n" + help;
}

std::string GdbReplayTarget::thread_name() const { return cap_.name; }

}  // namespace kjit::sim
