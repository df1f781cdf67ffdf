// SPDX-License-Identifier: GPL-2.0
#include "core/inliner.h"

namespace kjit {

bool InlineCache::init(Arena *arena, uint32_t capacity) {
  uint32_t cap = 1;
  while (cap * 2 <= capacity) cap *= 2;
  arena_ = arena;
  entries_ = arena->alloc_array<Entry>(cap);
  mask_ = cap - 1;
  return entries_ != nullptr;
}

const InlinedCode *InlineCache::get(const x86::Decoder &decoder, const void *routine,
                                    const InlineArgs &args, bool same_space) {
  uint64_t h = reinterpret_cast<uint64_t>(routine) * 0x9e3779b97f4a7c15ull;
  for (uint32_t i = 0; i < args.nargs; i++) h = (h ^ args.value[i] ^ args.is_const[i]) * 0x100000001b3ull;
  const uint32_t home = static_cast<uint32_t>(h >> 40) & mask_;
  // A short probe window, then replacement: tools like block counting pass
  // a different constant (their counter) at every site, so most requests
  // are seen once or twice (cost, then emit).  Scanning a full table, or
  // allocating a fresh specialisation per miss, made the JIT cost and the
  // arena grow with every block built.
  for (uint32_t n = 0; n < kProbeWindow && n <= mask_; n++) {
    Entry &e = entries_[(home + n) & mask_];
    if (!e.used) return fill(e, decoder, routine, args, same_space);
    if (e.routine == routine && __builtin_memcmp(&e.args, &args, sizeof(args)) == 0) return e.code;
  }
  // Window full: reuse the home entry (and its storage).  No caller holds
  // a returned pointer across calls, so overwriting is safe.
  return fill(entries_[home], decoder, routine, args, same_space);
}

const InlinedCode *InlineCache::fill(Entry &e, const x86::Decoder &decoder, const void *routine,
                                     const InlineArgs &args, bool same_space) {
  if (!e.storage) e.storage = arena_->alloc_array<InlinedCode>(1);
  e.used = 1;
  e.routine = routine;
  e.args = args;
  e.code = e.storage && arch::specialise_routine(decoder, routine, args, same_space, e.storage)
               ? e.storage
               : nullptr;
  return e.code;
}

}  // namespace kjit
