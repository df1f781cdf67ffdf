// SPDX-License-Identifier: GPL-2.0
#include "diff_runner.h"
#include "hex_text.h"

#include "c_functions.h"
#include "c_return.h"

#include <sstream>

namespace kjit::sim {
namespace {

const char *const kRegNames[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                   "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

std::string describe_write(const MemWrite &w) {
  return std::to_string(w.size) + " bytes " + hex(w.value) + " at " + hex(w.addr);
}

// Translated writes the program made: not into the engine's memory, not
// the stack slots of the gate protocol (flagged by the gates), and not by
// code for which kjit_engine_original_pc() knows no original instruction.
// Native code outside the cache is always the program's.
std::vector<MemWrite> program_writes(const std::vector<MemWrite> &all, const TranslatedRunner &tr) {
  std::vector<MemWrite> out;
  for (const MemWrite &w : all) {
    if (w.protocol || tr.is_engine_address(w.addr)) continue;
    if (tr.is_engine_address(w.pc) && !tr.is_cache_address(w.pc)) continue;  // a gate
    const uint64_t orig = w.mapped_pc;  // mapped when written: the cache is reused
    if (orig == 0) continue;
    MemWrite m = w;
    m.pc = orig;
    out.push_back(m);
  }
  return out;
}

void set_insn(const Capture &cap, uint64_t pc, Divergence *d) {
  d->original_pc = pc;
  d->original_insn = pc ? disassemble_capture(cap, pc) : "?";
}

// `c_entry`: the entry is a compiled C function, whose caller (the
// sentinel) reads neither the scratch registers but rax and rdx nor the
// arithmetic flags after it returns: the engine's ABI return sites and the
// instrumentation before such a return may leave them changed
// (kjit_os_c_abi_return, c_return.h).
Divergence compare(const Capture &cap, const ReferenceResult &ref, const TranslatedResult &tr,
                   const std::vector<MemWrite> &tw, bool c_entry) {
  Divergence d;
  if (ref.run.reason != StopReason::kSentinel || tr.run.reason != StopReason::kSentinel) {
    d.kind = Divergence::Kind::kOutcome;
    d.message = std::string("original run: ") + stop_reason_name(ref.run.reason) +
                (ref.run.message.empty() ? "" : " (" + ref.run.message + ")") +
                "; translated run: " + stop_reason_name(tr.run.reason) +
                (tr.run.message.empty() ? "" : " (" + tr.run.message + ")");
    set_insn(cap, ref.run.reason != StopReason::kSentinel ? ref.run.pc : 0, &d);
    return d;
  }
  const std::vector<MemWrite> &rw = ref.writes;
  for (size_t i = 0; i < std::min(rw.size(), tw.size()); i++) {
    const MemWrite &a = rw[i], &b = tw[i];
    if (a.addr == b.addr && a.size == b.size && a.value == b.value) continue;
    d.kind = Divergence::Kind::kWrite;
    d.index = i;
    d.address = a.addr;
    d.message = "write #" + std::to_string(i) + ": original wrote " + describe_write(a) +
                " at pc " + hex(a.pc) + ", translation wrote " + describe_write(b) + " (from original pc " +
                hex(b.pc) + ")";
    set_insn(cap, a.pc, &d);
    return d;
  }
  if (rw.size() != tw.size()) {
    d.kind = Divergence::Kind::kWriteCount;
    d.index = std::min(rw.size(), tw.size());
    const bool ref_longer = rw.size() > tw.size();
    const MemWrite &extra = ref_longer ? rw[d.index] : tw[d.index];
    d.address = extra.addr;
    d.message = "original made " + std::to_string(rw.size()) + " writes, translation " +
                std::to_string(tw.size()) + "; first unmatched (" + (ref_longer ? "original" : "translation") +
                "): " + describe_write(extra);
    set_insn(cap, extra.pc, &d);
    return d;
  }
  for (int r = 0; r < 16; r++) {
    if (ref.final_regs.gpr[r] == tr.final_regs.gpr[r] || (c_entry && dead_after_c_return(r))) continue;
    d.kind = Divergence::Kind::kRegister;
    d.index = r;
    d.message = std::string("final ") + kRegNames[r] + ": original " + hex(ref.final_regs.gpr[r]) +
                ", translation " + hex(tr.final_regs.gpr[r]);
    return d;
  }
  const uint64_t fa = ref.final_regs.rflags & kArithFlags, fb = tr.final_regs.rflags & kArithFlags;
  if (fa != fb && !c_entry) {
    d.kind = Divergence::Kind::kFlags;
    d.message = "final arithmetic flags: original " + hex(fa) + ", translation " + hex(fb);
  }
  return d;
}

}  // namespace

std::string disassemble_capture(const Capture &cap, uint64_t pc) {
  const Region *r = cap.find_region(pc);
  if (!r) return "?";
  InsnClassifier c;
  InsnClass k;
  const uint64_t off = pc - r->addr;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(15, r->bytes.size() - off));
  return c.classify(pc, r->bytes.data() + off, n, &k) ? k.text : "?";
}

DiffResult run_diff(const Capture &cap, const DiffOptions &opt) {
  DiffResult d;
  ReferenceOptions ref = opt.reference;
  if (!ref.symbols) ref.symbols = opt.translated.symbols;
  d.reference = run_reference(cap, ref);
  if (!d.reference.error.empty()) {
    d.error = "original run: " + d.reference.error;
    return d;
  }
  {
    TranslatedRunner tr(cap, opt.translated);
    d.translated = tr.run();
    if (!d.translated.error.empty()) {
      d.error = "translated run: " + d.translated.error;
      return d;
    }
    d.program_writes = program_writes(d.translated.writes, tr);
    if (opt.after_translated) opt.after_translated(tr);
  }
  const SymbolTable *syms = opt.translated.symbols;
  const bool c_entry = syms && in_c_function(cap, *syms, syms->address_of("__fentry__"), cap.entry_pc);
  d.divergence = compare(cap, d.reference, d.translated, d.program_writes, c_entry);
  d.equal = d.divergence.kind == Divergence::Kind::kNone;
  return d;
}

std::string describe_diff(const DiffResult &d) {
  std::ostringstream o;
  if (!d.error.empty()) return "error: " + d.error + "\n";
  o << (d.equal ? "MATCH" : "DIVERGENCE") << ": original " << d.reference.run.insns << " insns, "
    << d.reference.writes.size() << " writes; translated " << d.translated.run.insns << " insns ("
    << d.translated.cache_insns << " in cache), " << d.program_writes.size() << " program writes, "
    << d.translated.direct_gates << " direct / " << d.translated.indirect_gates << " indirect gate exits\n";
  if (!d.equal) {
    o << "  " << d.divergence.message << "\n";
    if (d.divergence.original_pc)
      o << "  near original instruction " << hex(d.divergence.original_pc) << ": " << d.divergence.original_insn
        << "\n";
  }
  const kjit_engine_stats &s = d.translated.stats;
  o << "  engine: " << s.blocks_built << " blocks, " << s.insns_translated << " insns translated, "
    << s.fallbacks << " fallbacks, " << s.direct_links << " direct links, " << s.chain_links
    << " chain links, " << s.cache_bytes_used << " cache bytes\n";
  return o.str();
}

}  // namespace kjit::sim
