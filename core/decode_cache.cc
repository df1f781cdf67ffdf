// SPDX-License-Identifier: GPL-2.0
#include "core/decode_cache.h"

namespace kjit {
namespace {

// By address.  Direct-mapped.  A build's own look-ahead fits many times
// over; the size is for the code a workload builds over time, which the
// look-ahead of earlier builds decoded (the whole-kernel sweep: 37% of the
// build cost saved), and builds again: a callee once per call site that
// gets a copy of it, everything after a flush.  16384 entries, 1.4 MB.  The
// addresses are apart from the records: a miss, the sweep's usual case,
// reads 8 bytes of a 128 KiB array that stays in the CPU's cache, not a
// record.  Address 0 marks an empty entry.
constexpr uint32_t kEntries = 16384;
constinit uint64_t g_pcs[kEntries]{};
constinit x86::Insn g_decoded[kEntries]{};

uint32_t index_of(uint64_t pc) { return static_cast<uint32_t>((pc * 0x9e3779b97f4a7c15ull) >> 40) & (kEntries - 1); }

// By encoding.  An instruction with no operand relative to its address
// decodes the same wherever it is, and a few thousand encodings make most
// of the kernel (`push rbp`, `mov rax, [rdi+8]`, `xor eax, eax`): of the
// first 1.5 million instructions of the rt vmlinux, three in four are not
// relative and nine in ten of those repeat an encoding seen before.  Zydis
// is most of what a build costs, so a miss by address looks here first.
// x86 encodings are a prefix code (the bytes an instruction consumes decide
// its length), so a held instruction of length L whose L bytes begin the
// code is the instruction there.  Which lengths to try comes from a mask by
// the code's first two bytes, a hint only: each try compares the bytes.
// 8192 entries (the sweep's first 3000 functions in a simulation: 54% of the
// decodes served, 16384 would serve 58%), 850 KB, and 128 KB of masks.
constexpr uint32_t kEncodings = 8192;
struct Encoding {
  uint64_t lo, hi;  // the instruction's bytes, zero past its length
};
constinit Encoding g_encodings[kEncodings]{};
constinit x86::Insn g_by_encoding[kEncodings]{};  // length 0: empty
constinit uint16_t g_lengths[1u << 16]{};          // bit L: an instruction of length L was held

// By shape.  An instruction relative to its address (a direct branch, a
// RIP-relative operand) is the same as another whose bytes differ only in
// its relative field, at another target (x86::Decoder::relocate).  Such
// an instruction is held with that field zeroed, and found by the same
// bytes with the field zeroed: where the field lies comes from hints by
// the code's first byte (a field right after it: e8, e9, eb, 7x) and by its
// first two (a field further on: 0f 8x, RIP-relative operands), one shape
// each, a hint only: each try compares the bytes.  2048 entries (the
// sweep's first 3000 functions: 33,609 of its 110,635 instructions relocated).
constexpr uint32_t kShapes = 2048;
struct Shape {
  uint8_t length, offset, size;  // length 0: none
};
struct Shaped {
  Encoding key;      // the bytes, the field zeroed
  Shape shape;
  x86::Insn insn;    // length 0: empty
};
constinit Shaped g_by_shape[kShapes]{};
constinit Shape g_shape_after_1[1u << 8]{};   // field at offset 1, by the first byte
constinit Shape g_shape_after_2[1u << 16]{};  // field at 2 or more, by the first two

constinit DecodeCacheStats g_stats{};

// The first `n` bytes of `b` (16 readable, zero past the code), zero past them.
Encoding prefix(const uint8_t *b, uint32_t n) {
  uint64_t lo, hi;
  __builtin_memcpy(&lo, b, 8);
  __builtin_memcpy(&hi, b + 8, 8);
  if (n < 8) return {n ? lo & (~0ull >> (64 - 8 * n)) : 0, 0};
  return {lo, n == 8 ? 0 : hi & (~0ull >> (64 - 8 * (n - 8)))};
}

uint32_t encoding_index(const Encoding &e, uint32_t n) {
  const uint64_t h = (e.lo * 0x9e3779b97f4a7c15ull) ^ (e.hi * 0xc2b2ae3d27d4eb4full) ^ n;
  return static_cast<uint32_t>((h * 0xff51afd7ed558ccdull) >> 40) & (kEncodings - 1);
}

// The mask of lengths held for code that begins as `b` does.
uint16_t &lengths_of(const uint8_t *b) { return g_lengths[b[0] | b[1] << 8]; }

// The held instruction that begins `b` (`len` bytes of code), or null.
const x86::Insn *find_encoding(const uint8_t *b, uint32_t len) {
  uint32_t lengths = lengths_of(b);
  while (lengths) {
    const uint32_t n = static_cast<uint32_t>(__builtin_ctz(lengths));
    lengths &= lengths - 1;
    if (n > len) break;
    const Encoding e = prefix(b, n);
    const uint32_t i = encoding_index(e, n);
    if (g_by_encoding[i].length == n && g_encodings[i].lo == e.lo && g_encodings[i].hi == e.hi)
      return &g_by_encoding[i];
  }
  return nullptr;
}

void hold_encoding(const uint8_t *b, const x86::Insn &in) {
  const uint32_t n = in.length;
  const Encoding e = prefix(b, n);
  const uint32_t i = encoding_index(e, n);
  g_encodings[i] = e;
  g_by_encoding[i] = in;
  lengths_of(b) = static_cast<uint16_t>(lengths_of(b) | 1u << n);
}

// The code's bytes as a shape holds them: its first `length`, the field zeroed.
Encoding shaped_key(const uint8_t *b, const Shape &sh) {
  uint8_t masked[16];
  __builtin_memcpy(masked, b, 16);
  __builtin_memset(masked + sh.offset, 0, sh.size);
  return prefix(masked, sh.length);
}

uint32_t shape_index(const Encoding &e, const Shape &sh) {
  return encoding_index(e, sh.length | sh.offset << 4 | sh.size << 8) & (kShapes - 1);
}

Shape &shape_hint(const uint8_t *b, uint32_t offset) {
  return offset == 1 ? g_shape_after_1[b[0]] : g_shape_after_2[b[0] | b[1] << 8];
}

// The held instruction of the shape `sh` that begins `b` (`len` bytes), or null.
const Shaped *find_shaped(const uint8_t *b, uint32_t len, const Shape &sh) {
  if (!sh.length || sh.length > len) return nullptr;
  const Encoding e = shaped_key(b, sh);
  const Shaped &s = g_by_shape[shape_index(e, sh)];
  if (s.insn.length != sh.length || s.shape.offset != sh.offset || s.shape.size != sh.size || s.key.lo != e.lo ||
      s.key.hi != e.hi)
    return nullptr;
  return &s;
}

void hold_shaped(const uint8_t *b, const x86::Insn &in, uint32_t offset, uint32_t size) {
  const Shape sh{in.length, static_cast<uint8_t>(offset), static_cast<uint8_t>(size)};
  const Encoding e = shaped_key(b, sh);
  Shaped &s = g_by_shape[shape_index(e, sh)];
  s.key = e;
  s.shape = sh;
  s.insn = in;
  shape_hint(b, offset) = sh;
}

}  // namespace

x86::DecodeStatus decode_cached(const x86::Decoder &decoder, uint64_t pc, const uint8_t *bytes, uint32_t len,
                                x86::Insn *out) {
  const uint32_t i = index_of(pc);
  if (pc != 0 && g_pcs[i] == pc) {
    const x86::Insn &e = g_decoded[i];
    if (e.length <= len && __builtin_memcmp(e.bytes, bytes, e.length) == 0) {
      *out = e;
      g_stats.by_address++;
      return x86::DecodeStatus::kOk;
    }
  }
  if (len == 0) return x86::DecodeStatus::kTruncated;
  // 16 readable bytes, zero past the code: in place when there are.
  uint8_t copy[16] = {};
  const uint8_t *code = bytes;
  if (len < 16) {
    __builtin_memcpy(copy, bytes, len);
    code = copy;
  }
  // Found by encoding or shape, it stays out of the address cache, which
  // keeps its room for what only it can answer.
  if (const x86::Insn *held = find_encoding(code, len)) {
    *out = *held;
    out->pc = pc;
    g_stats.by_encoding++;
    return x86::DecodeStatus::kOk;
  }
  if (len >= 2) {
    const Shaped *s = find_shaped(code, len, g_shape_after_1[code[0]]);
    if (!s) s = find_shaped(code, len, g_shape_after_2[code[0] | code[1] << 8]);
    if (s) {
      decoder.relocate(s->insn, s->shape.offset, s->shape.size, pc, code, out);
      g_stats.relocated++;
      return x86::DecodeStatus::kOk;
    }
  }
  const x86::DecodeStatus st = decoder.decode(pc, bytes, len, out);
  g_stats.decoded++;
  if (st != x86::DecodeStatus::kOk) return st;
  uint32_t offset, size;
  if (!out->pc_relative) hold_encoding(code, *out);
  else if (out->length >= 2 && x86::Decoder::relocatable_field(*out, &offset, &size)) hold_shaped(code, *out, offset, size);
  g_pcs[i] = pc;
  g_decoded[i] = *out;
  return st;
}

void forget_decodes() {
  for (uint64_t &pc : g_pcs) pc = 0;
  for (x86::Insn &in : g_by_encoding) in.length = 0;
  for (uint16_t &mask : g_lengths) mask = 0;
  for (Shaped &s : g_by_shape) s.insn.length = 0;
  for (Shape &sh : g_shape_after_1) sh.length = 0;
  for (Shape &sh : g_shape_after_2) sh.length = 0;
}

DecodeCacheStats decode_cache_stats() { return g_stats; }

}  // namespace kjit
