/* SPDX-License-Identifier: GPL-2.0 */
// Decoded instructions by address, those not relative to their address
// also by encoding, and those relative to it by shape.  A block's liveness
// looks ahead into its successors and the callees of its calls, and the
// trace builder decodes those successors again when it lays them out:
// without a memory of what
// it decoded, the builder decodes each instruction about four times, and
// Zydis is most of a build's cost.
#pragma once
#include "arch/arch.h"

namespace kjit {

// decoder.decode(pc, bytes, len, out), answered from the cache when the
// instruction at `pc` was decoded before from the same bytes: code that
// changed (text patching, a module loaded at a freed address) is decoded
// again.  Under the engine lock (one builder at a time).
x86::DecodeStatus decode_cached(const x86::Decoder &decoder, uint64_t pc, const uint8_t *bytes, uint32_t len,
                                x86::Insn *out);

// Empties the cache: the decoder's kernel facts (thunk and fentry
// addresses, which classify instructions) may have changed.
void forget_decodes();

// How decode_cached answered: from a decode at the same address, from one
// of the same encoding elsewhere, from one of the same shape elsewhere
// relocated (relative to its address), or through the decoder.
struct DecodeCacheStats {
  uint64_t by_address, by_encoding, relocated, decoded;
};
DecodeCacheStats decode_cache_stats();

}  // namespace kjit
