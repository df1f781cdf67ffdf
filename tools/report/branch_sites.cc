#include "branch_sites.h"

#include <Zydis/Zydis.h>

#include <map>

namespace kjit::report {
namespace {

bool is_conditional(ZydisMnemonic m) {
  switch (m) {
    case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JBE: case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ:
    case ZYDIS_MNEMONIC_JL: case ZYDIS_MNEMONIC_JLE: case ZYDIS_MNEMONIC_JNB: case ZYDIS_MNEMONIC_JNBE:
    case ZYDIS_MNEMONIC_JNL: case ZYDIS_MNEMONIC_JNLE: case ZYDIS_MNEMONIC_JNO: case ZYDIS_MNEMONIC_JNP:
    case ZYDIS_MNEMONIC_JNS: case ZYDIS_MNEMONIC_JNZ: case ZYDIS_MNEMONIC_JO: case ZYDIS_MNEMONIC_JP:
    case ZYDIS_MNEMONIC_JRCXZ: case ZYDIS_MNEMONIC_JS: case ZYDIS_MNEMONIC_JZ: case ZYDIS_MNEMONIC_LOOP:
    case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
      return true;
    default:
      return false;
  }
}

// Every conditional branch in the function's bytes (running addresses).
void add_function_branches(const Symbol &s, const DebugInfo &dbg, int64_t slide,
                           std::map<uint64_t, BranchSite> &sites) {
  std::vector<uint8_t> bytes;
  if (!dbg.read(s.addr - slide, s.size, bytes)) return;
  ZydisDecoder dec;
  ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  for (size_t off = 0; off < bytes.size();) {
    ZydisDecodedInstruction in;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, bytes.data() + off, bytes.size() - off, &in, ops))) {
      off++;
      continue;
    }
    const uint64_t a = s.addr + off;
    ZyanU64 target = 0;
    if (is_conditional(in.mnemonic) && ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], a, &target))) {
      BranchSite &b = sites[a];
      if (!b.counted) b = BranchSite{a, target, 0, 0, false, &s};
    }
    off += in.length;
  }
}

}  // namespace

std::vector<BranchSite> branch_sites(const Recording &r, const Coverage &cov, const DebugInfo *dbg) {
  std::map<uint64_t, BranchSite> sites;
  for (const auto &b : r.branches)
    sites[b.addr] = BranchSite{b.addr, b.target, b.taken, b.not_taken, true, r.symbol_at(b.addr)};
  if (dbg)
    for (const Symbol *s : cov.entered(r)) add_function_branches(*s, *dbg, cov.slide, sites);
  std::vector<BranchSite> v;
  v.reserve(sites.size());
  for (auto &[a, b] : sites) v.push_back(b);
  return v;
}

}  // namespace kjit::report
