// SPDX-License-Identifier: GPL-2.0
#include "core/source_deps.h"

namespace kjit {

constinit TraceSources *g_trace_sources = nullptr;
constinit LivenessSources *g_liveness_sources = nullptr;

bool SourceIndex::init(Arena *arena, uint32_t traces) {
  uint32_t n = 64;
  while (n < traces && n < (1u << 20)) n *= 2;
  arena_ = arena;
  wide_ = nullptr;
  buckets_ = arena->alloc_array<Node *>(n);
  mask_ = n - 1;
  complete_ = buckets_ != nullptr;
  if (buckets_) __builtin_memset(static_cast<void *>(buckets_), 0, sizeof(Node *) * n);
  return complete_;
}

bool SourceIndex::add(uint64_t lo, uint64_t hi, Block *trace) {
  if (!complete_ || lo >= hi) return complete_;
  const uint64_t first = lo >> 12, last = (hi - 1) >> 12;
  const bool wide = last - first >= kMaxPagesPerRange;
  for (uint64_t page = first; page <= last; page++) {
    Node *n = arena_->alloc_array<Node>(1);
    if (!n) {
      complete_ = false;
      return false;
    }
    *n = {lo, hi, trace, nullptr};
    Node **head = wide ? &wide_ : bucket(page);
    n->next = *head;
    *head = n;
    if (wide) break;
  }
  return true;
}

}  // namespace kjit
