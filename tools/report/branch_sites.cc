// SPDX-License-Identifier: GPL-2.0
#include "branch_sites.h"

#include "arch/x86/disasm/disassembly.h"

#include <map>

namespace kjit::report {
namespace {

// Every conditional branch in the function's bytes (running addresses).
void add_function_branches(const Symbol &s, const DebugImages &dbg, std::map<uint64_t, BranchSite> &sites) {
  std::vector<uint8_t> bytes;
  if (!dbg.read(s.addr, s.size, bytes)) return;
  for (size_t off = 0; off < bytes.size();) {
    const uint64_t a = s.addr + off;
    x86::disasm::ConditionalBranch br;
    const uint32_t len = x86::disasm::decode_branch(a, bytes.data() + off, bytes.size() - off, &br);
    if (!len) {
      off++;
      continue;
    }
    if (br.is_conditional) {
      BranchSite &b = sites[a];
      if (!b.counted) b = BranchSite{a, br.target, 0, 0, false, &s};
    }
    off += len;
  }
}

}  // namespace

std::vector<BranchSite> branch_sites(const Recording &r, const Coverage &cov, const DebugImages *dbg) {
  std::map<uint64_t, BranchSite> sites;
  for (const auto &b : r.branches)
    sites[b.addr] = BranchSite{b.addr, b.target, b.taken, b.not_taken, true, r.symbol_at(b.addr)};
  if (dbg)
    for (const Symbol *s : cov.entered(r)) add_function_branches(*s, *dbg, sites);
  std::vector<BranchSite> v;
  v.reserve(sites.size());
  for (auto &[a, b] : sites) v.push_back(b);
  return v;
}

}  // namespace kjit::report
