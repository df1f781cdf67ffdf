// SPDX-License-Identifier: GPL-2.0
#include "replay_log.h"

#include <algorithm>
#include <cstring>

namespace kjit::sim {
namespace {

class In {
 public:
  In(const std::vector<uint8_t> &v) : p_(v.data()), n_(v.size()) {}
  size_t left() const { return n_ - pos_; }
  size_t pos() const { return pos_; }
  bool u32(uint32_t *v) { return get(v, 4); }
  bool u64(uint64_t *v) { return get(v, 8); }
  bool bytes(size_t n, std::vector<uint8_t> *out) {
    if (left() < n) return false;
    out->assign(p_ + pos_, p_ + pos_ + n);
    pos_ += n;
    return true;
  }

 private:
  template <typename T>
  bool get(T *v, size_t n) {
    if (left() < n) return false;
    T r = 0;
    for (size_t i = 0; i < n; i++) r |= static_cast<T>(p_[pos_ + i]) << (8 * i);
    pos_ += n;
    *v = r;
    return true;
  }
  const uint8_t *p_;
  size_t n_, pos_ = 0;
};

void put32(std::vector<uint8_t> *o, uint32_t v) {
  for (int i = 0; i < 4; i++) o->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put64(std::vector<uint8_t> *o, uint64_t v) {
  for (int i = 0; i < 8; i++) o->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

std::string rec(const char *sec, size_t i) { return std::string(sec) + "[" + std::to_string(i) + "]: "; }

// A count of records each at least `min` bytes must fit the payload.
bool count_fits(uint32_t count, const In &in, size_t min) { return count <= in.left() / min; }

std::string parse_reads(const std::vector<uint8_t> &p, ReplayLog *out) {
  In in(p);
  uint32_t count;
  if (!in.u32(&count)) return "MEMREAD: truncated count";
  if (!count_fits(count, in, sizeof(kjit_capf_read) + 1)) return "MEMREAD: count " + std::to_string(count) + " does not fit";
  out->reads.resize(count);
  for (uint32_t i = 0; i < count; i++) {
    LoggedRead &r = out->reads[i];
    uint32_t size;
    if (!in.u64(&r.pc) || !in.u64(&r.addr) || !in.u64(&r.ea) || !in.u32(&size) || !in.u32(&r.flags))
      return rec("MEMREAD", i) + "truncated";
    if (size == 0 || size > kMaxReadSize) return rec("MEMREAD", i) + "bad size " + std::to_string(size);
    if (r.flags & ~kReadFlagsMask) return rec("MEMREAD", i) + "unknown flags";
    const uint32_t seg = r.segment();
    if (seg != 0 && seg != 4 && seg != 5) return rec("MEMREAD", i) + "bad segment " + std::to_string(seg);
    if (r.addr + (size - 1) < r.addr) return rec("MEMREAD", i) + "wraps around the address space";
    if (!in.bytes(size, &r.bytes)) return rec("MEMREAD", i) + "value truncated";
  }
  if (in.left()) return "MEMREAD: " + std::to_string(in.left()) + " trailing bytes";
  return "";
}

std::string parse_nondet(const std::vector<uint8_t> &p, ReplayLog *out) {
  In in(p);
  uint32_t count;
  if (!in.u32(&count)) return "NONDET: truncated count";
  constexpr size_t kRec = sizeof(kjit_capf_nondet);
  if (in.left() != static_cast<uint64_t>(count) * kRec)
    return "NONDET: " + std::to_string(in.left()) + " bytes for " + std::to_string(count) + " records of " +
           std::to_string(kRec);
  out->nondets.resize(count);
  for (LoggedNondet &n : out->nondets) {
    in.u64(&n.pc);
    in.u64(&n.dest);
    in.u64(&n.rcx);
    in.u64(&n.rdx);
    in.u64(&n.rbx);
    in.u64(&n.rflags);
  }
  return "";
}

std::string parse_blocks(const std::vector<uint8_t> &p, ReplayLog *out) {
  In in(p);
  uint32_t count;
  if (!in.u32(&count)) return "BLOCKS: truncated count";
  constexpr size_t kRec = sizeof(kjit_capf_block);
  if (in.left() != static_cast<uint64_t>(count) * kRec)
    return "BLOCKS: " + std::to_string(in.left()) + " bytes for " + std::to_string(count) + " records of " +
           std::to_string(kRec);
  out->blocks.resize(count);
  for (size_t i = 0; i < count; i++) {
    LoggedBlock &b = out->blocks[i];
    in.u64(&b.pc);
    in.u32(&b.ninsns);
    in.u32(&b.flags);
    if (b.ninsns == 0 || b.ninsns > KJIT_CAPF_BLOCK_MAX_INSNS) return rec("BLOCKS", i) + "bad instruction count";
    if (b.flags & ~KJIT_CAPF_BLOCK_FLAGS_MASK) return rec("BLOCKS", i) + "unknown flags";
  }
  return "";
}

std::string parse_resumes(const std::vector<uint8_t> &p, ReplayLog *out) {
  In in(p);
  uint32_t count;
  if (!in.u32(&count)) return "RESUME: truncated count";
  constexpr size_t kRec = sizeof(kjit_capf_resume);
  if (in.left() != static_cast<uint64_t>(count) * kRec)
    return "RESUME: " + std::to_string(in.left()) + " bytes for " + std::to_string(count) + " records of " +
           std::to_string(kRec);
  out->resumes.resize(count);
  for (size_t i = 0; i < count; i++) {
    LoggedResume &r = out->resumes[i];
    uint32_t reserved = 0;
    in.u64(&r.pc);
    in.u64(&r.target);
    in.u64(&r.ret);
    for (uint64_t &g : r.gpr) in.u64(&g);
    in.u64(&r.rflags);
    in.u64(&r.gs_base);
    in.u32(&r.cpu);
    in.u32(&reserved);
    if (reserved) return rec("RESUME", i) + "reserved field is not 0";
    if (r.ret <= r.pc || r.ret - r.pc > KJIT_CAPF_CALL_MAX_LEN) return rec("RESUME", i) + "return address is not after the call";
    if (r.target == 0) return rec("RESUME", i) + "no funnel address";
  }
  return "";
}

std::string parse_kresult(const std::vector<uint8_t> &p, ReplayLog *out) {
  if (p.size() != sizeof(kjit_capf_kresult))
    return "KRESULT: length " + std::to_string(p.size()) + ", expected " + std::to_string(sizeof(kjit_capf_kresult));
  In in(p);
  uint32_t end;
  KernelResult &k = out->kernel;
  in.u32(&end);
  in.u32(&k.capture_flags);
  in.u64(&k.icount_tool_begin);
  in.u64(&k.icount_tool_end);
  in.u32(&k.pid);
  in.u32(&k.cpu);
  if (end > KJIT_CAP_END_SLEPT) return "KRESULT: unknown end reason " + std::to_string(end);
  if (k.capture_flags & ~(KJIT_CAP_F_OVERFLOW | KJIT_CAP_F_CODE_OVERFLOW)) return "KRESULT: unknown capture flags";
  k.end = static_cast<EndReason>(end);
  return "";
}

std::string parse_symbols(const std::vector<uint8_t> &p, ReplayLog *out) {
  In in(p);
  uint32_t count;
  if (!in.u32(&count)) return "SYMBOLS: truncated count";
  if (!count_fits(count, in, 12 + 1)) return "SYMBOLS: count " + std::to_string(count) + " does not fit";
  out->symbols.resize(count);
  for (uint32_t i = 0; i < count; i++) {
    uint32_t len;
    std::vector<uint8_t> name;
    if (!in.u64(&out->symbols[i].addr) || !in.u32(&len)) return rec("SYMBOLS", i) + "truncated";
    if (len == 0 || len > KJIT_CAPF_SYMBOL_MAX) return rec("SYMBOLS", i) + "bad name length";
    if (!in.bytes(len, &name)) return rec("SYMBOLS", i) + "name truncated";
    for (uint8_t c : name)
      if (c <= ' ' || c >= 0x7f) return rec("SYMBOLS", i) + "name is not printable";
    out->symbols[i].name.assign(name.begin(), name.end());
  }
  if (in.left()) return "SYMBOLS: " + std::to_string(in.left()) + " trailing bytes";
  return "";
}

}  // namespace

const char *end_reason_name(EndReason r) {
  switch (r) {
    case EndReason::kNone: return "none";
    case EndReason::kReturned: return "returned";
    case EndReason::kOverflow: return "overflow";
    case EndReason::kLeftCache: return "left-cache";
    case EndReason::kStopped: return "stopped";
    case EndReason::kSlept: return "slept";
  }
  return "?";
}

uint64_t ReplayLog::kernel_icount() const {
  uint64_t n = 0;
  for (const LoggedBlock &b : blocks) n += b.ninsns;
  return n;
}

std::vector<uint64_t> ReplayLog::kernel_call_trace() const {
  std::vector<uint64_t> t;
  size_t k = 0;  // next sleep
  for (size_t i = 0; i + 1 < blocks.size(); i++) {
    if (!(blocks[i].flags & 1)) continue;
    if (k < resumes.size() && blocks[i + 1].pc == resumes[k].ret) {
      t.push_back(resumes[k++].target);  // the funnel ran outside the cache
      continue;
    }
    t.push_back(blocks[i + 1].pc);
  }
  return t;
}

std::string parse_replay_log(const Capture &cap, ReplayLog *out) {
  *out = ReplayLog{};
  bool seen[kLastReplaySection - kFirstReplaySection + 1] = {};
  for (const RawSection &s : cap.extra) {
    if (s.type < kFirstReplaySection || s.type > kLastReplaySection) continue;  // unknown: kept, not ours
    const uint32_t k = s.type - kFirstReplaySection;
    if (seen[k]) return "duplicate replay section " + std::to_string(s.type);
    seen[k] = true;
    std::string err;
    switch (static_cast<ReplaySection>(s.type)) {
      case ReplaySection::kMemRead: err = parse_reads(s.payload, out); break;
      case ReplaySection::kNondet: err = parse_nondet(s.payload, out); break;
      case ReplaySection::kBlocks: err = parse_blocks(s.payload, out); break;
      case ReplaySection::kKernelResult: err = parse_kresult(s.payload, out); break;
      case ReplaySection::kSymbols: err = parse_symbols(s.payload, out); break;
      case ReplaySection::kResume: err = parse_resumes(s.payload, out); break;
    }
    if (!err.empty()) return err;
  }
  out->present = seen[0] || seen[1] || seen[2] || seen[3];
  if ((out->present || seen[KJIT_CAPF_RESUME - kFirstReplaySection]) && !(seen[0] && seen[1] && seen[2] && seen[3]))
    return "incomplete replay log: MEMREAD, NONDET, BLOCKS and KRESULT go together (and come with RESUME)";
  return "";
}

void put_replay_log(const ReplayLog &log, Capture *cap) {
  auto &ex = cap->extra;
  ex.erase(std::remove_if(ex.begin(), ex.end(), [](const RawSection &s) {
                             return s.type >= kFirstReplaySection && s.type <= kLastReplaySection;
                           }),
           ex.end());
  std::vector<uint8_t> p;
  put32(&p, static_cast<uint32_t>(log.reads.size()));
  for (const LoggedRead &r : log.reads) {
    put64(&p, r.pc);
    put64(&p, r.addr);
    put64(&p, r.ea);
    put32(&p, static_cast<uint32_t>(r.bytes.size()));
    put32(&p, r.flags);
    p.insert(p.end(), r.bytes.begin(), r.bytes.end());
  }
  ex.push_back({KJIT_CAPF_MEMREAD, p});
  p.clear();
  put32(&p, static_cast<uint32_t>(log.nondets.size()));
  for (const LoggedNondet &n : log.nondets)
    for (uint64_t v : {n.pc, n.dest, n.rcx, n.rdx, n.rbx, n.rflags}) put64(&p, v);
  ex.push_back({KJIT_CAPF_NONDET, p});
  p.clear();
  put32(&p, static_cast<uint32_t>(log.blocks.size()));
  for (const LoggedBlock &b : log.blocks) {
    put64(&p, b.pc);
    put32(&p, b.ninsns);
    put32(&p, b.flags);
  }
  ex.push_back({KJIT_CAPF_BLOCKS, p});
  p.clear();
  put32(&p, static_cast<uint32_t>(log.kernel.end));
  put32(&p, log.kernel.capture_flags);
  put64(&p, log.kernel.icount_tool_begin);
  put64(&p, log.kernel.icount_tool_end);
  put32(&p, log.kernel.pid);
  put32(&p, log.kernel.cpu);
  ex.push_back({KJIT_CAPF_KRESULT, p});
  p.clear();
  put32(&p, static_cast<uint32_t>(log.symbols.size()));
  for (const SymbolTable::Sym &s : log.symbols) {
    put64(&p, s.addr);
    put32(&p, static_cast<uint32_t>(s.name.size()));
    p.insert(p.end(), s.name.begin(), s.name.end());
  }
  ex.push_back({KJIT_CAPF_SYMBOLS, p});
  if (log.resumes.empty()) return;  // the section is written only for sleeps
  p.clear();
  put32(&p, static_cast<uint32_t>(log.resumes.size()));
  for (const LoggedResume &r : log.resumes) {
    for (uint64_t v : {r.pc, r.target, r.ret}) put64(&p, v);
    for (uint64_t g : r.gpr) put64(&p, g);
    put64(&p, r.rflags);
    put64(&p, r.gs_base);
    put32(&p, r.cpu);
    put32(&p, 0);
  }
  ex.push_back({KJIT_CAPF_RESUME, p});
}

}  // namespace kjit::sim
