// SPDX-License-Identifier: GPL-2.0
#include "replay_memory.h"
#include "hex_text.h"

#include <algorithm>

#include "log_server.h"

namespace kjit::sim {
std::string logged_read_pages(const Capture &cap, const ReplayLog &log, std::set<uint64_t> *pages) {
  for (const LoggedRead &r : log.reads) {
    if (r.flags & kReadFailed) continue;
    const uint64_t a = read_address(r, cap);
    for (uint64_t p = page_down(a); p <= page_down(a + r.bytes.size() - 1); p += kPageSize) pages->insert(p);
  }
  if (pages->count(page_down(cap.sentinel))) return "a logged read hits the sentinel page";
  return "";
}

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


SymbolTable replay_symbols(const Capture &cap, const ReplayLog &log, const SymbolTable *kallsyms) {
  SymbolTable syms;
  for (const SymbolTable::Sym &s : log.symbols) syms.add(s.addr, s.name);
  if (kallsyms) {
    const CaptureKaslr kaslr = capture_kaslr(cap);
    for (const SymbolTable::Sym &s : kallsyms->all()) {
      const uint64_t at = s.addr + kaslr.offset;
      if (!kaslr.offset || (at >= kaslr.image_lo && at < kaslr.image_hi)) syms.add(at, s.name);
    }
  }
  syms.finalize();
  return syms;
}

}  // namespace kjit::sim
