// SPDX-License-Identifier: GPL-2.0
#include "log_server.h"
#include "hex_text.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "arch/x86/mnemonic.h"

namespace kjit::sim {
namespace {

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
// (os/linux/capture/capture.c): two for cmps (both sources), none for a rep
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

}  // namespace

uint64_t read_address(const LoggedRead &r, const Capture &cap) {
  if (r.segment() == 5) return r.ea + cap.regs.gs_base;
  if (r.segment() == 4) return r.ea + cap.regs.fs_base;
  return r.addr;
}

bool decode_captured(const Capture &cap, uint64_t pc, x86::Insn *in) {
  const Region *r = cap.find_region(pc);
  if (!r) return false;
  const uint64_t off = pc - r->addr;
  const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(15, r->bytes.size() - off));
  return engine_decoder().decode(pc, r->bytes.data() + off, n, in) == x86::DecodeStatus::kOk;
}

uint64_t first_copied_pc(const Capture &cap, const LoggedBlock &blk) {
  uint64_t pc = blk.pc;
  for (uint32_t i = 0; i + 1 < blk.ninsns; i++) {
    x86::Insn in{};
    if (!decode_captured(cap, pc, &in)) return pc;
    if (!in.is_nop) return pc;
    pc += in.length;
  }
  return 0;
}

std::vector<uint64_t> native_calls(const ReplayLog &log, const SymbolTable *syms) {
  const uint64_t funnel = syms ? syms->address_of("__schedule") : 0;
  std::set<uint64_t> t;
  for (const LoggedResume &r : log.resumes)
    if (r.target != funnel) t.insert(r.target);
  return {t.begin(), t.end()};
}

uint64_t LogServer::resume_at_gate(Emulator &emu) {
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


void LogServer::attach(Emulator &emu) {
  emu.add_code_hook(1, ~uint64_t{0}, [this](Emulator &e, uint64_t pc, uint32_t size) { on_insn(e, pc, size); });
}

void LogServer::restart() {
  last_orig_ = last_block_ = 0;
  flags_pending_ = false;
  flags_pc_ = flags_value_ = 0;
  st_ = ServeState{};
}


void LogServer::problem(Emulator &emu, uint64_t pc, const std::string &why) {
  if (st_.error.empty()) st_.error = why;
  emu.fail(pc, why);
}

// Writes a logged read's bytes where the instruction reads them, but
// the sentinel: the slot of the entry's return address holds it in the
// replay (both runs push it below the captured rsp), and a function that
// reads its own return address (a realigned frame's prologue copies it:
// `push -0x8(%r10)`) logged the kernel's, which would send the final
// ret back into the caller.
bool LogServer::place_read(Emulator &emu, uint64_t at, const std::vector<uint8_t> &bytes) {
  const uint64_t slot = cap_.regs.gpr[KJIT_REG_RSP] - 8, end = at + bytes.size();
  if (end <= slot || at >= slot + 8) return emu.write(at, bytes.data(), bytes.size());
  if (at < slot && !emu.write(at, bytes.data(), slot - at)) return false;
  if (end > slot + 8 && !emu.write(slot + 8, bytes.data() + (slot + 8 - at), end - (slot + 8))) return false;
  return true;
}

// Whether the instruction at `pc` (original or cache pc) is one a
// capture logs as NONDET; decoded once per pc.
bool LogServer::is_nondet(const Emulator &emu, uint64_t pc) {
  auto it = nondet_at_.find(pc);
  if (it == nondet_at_.end()) it = nondet_at_.emplace(pc, nondet_dest(emu, pc) >= 0).first;
  return it->second;
}


void LogServer::on_insn(Emulator &emu, uint64_t pc, uint32_t size) {
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
bool LogServer::sleep_at(Emulator &emu, uint64_t orig, uint64_t pc, uint32_t size) {
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
bool LogServer::take_resume(Emulator &emu, uint64_t ret, uint64_t sp) {
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


bool LogServer::is_copy(const Emulator &emu, uint64_t pc, uint64_t orig) const {
  uint8_t a[2], b[2];
  const Region *r = cap_.find_region(orig);
  if (!r || orig + 2 > r->end() || !emu.read(pc, a, 2)) return false;
  memcpy(b, r->bytes.data() + (orig - r->addr), 2);
  return a[0] == b[0] && a[1] == b[1];
}

LogServer::Position LogServer::save() const {
  return Position{st_, last_orig_, last_block_, flags_pending_, flags_pc_, flags_value_};
}

void LogServer::restore(const Position &p) {
  st_ = p.st;
  last_orig_ = p.last_orig;
  last_block_ = p.last_block;
  flags_pending_ = p.flags_pending;
  flags_pc_ = p.flags_pc;
  flags_value_ = p.flags_value;
}

bool LogServer::pending_flags(uint64_t *arith_flags) const {
  if (!flags_pending_) return false;
  *arith_flags = flags_value_ & kArithFlags;
  return true;
}

}  // namespace kjit::sim
