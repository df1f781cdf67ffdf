/* SPDX-License-Identifier: GPL-2.0 */
// What each trace was built from, so that a change to kernel text retires
// the traces that read the changed bytes and no other
// (kjit_engine_retire_range).
//
// A trace depends on every byte the engine read while building it: its
// instructions, and the look-ahead that decided what its instrumentation
// may clobber (liveness, which also reads its successors and the entries of
// the functions they call).  Reads are noted as they happen (CodeReader),
// into the collector of the build under way; a memoised live-in carries the
// reads that computed it, and hands them to every later build that uses it.
// The ranges are kept whole, a few per trace: once a collector is full its
// two closest ranges merge, which can only make a trace depend on more.
//
// SourceIndex finds a generation's traces by the text they read: a hash of
// the pages their ranges cover.  A range over more than kMaxPagesPerRange
// pages goes to a list every lookup scans.  Nodes live in the epoch's arena
// and are dropped with it; a retired trace's nodes are unlinked the next
// time a lookup passes them.
#pragma once
#include "core/arena.h"
#include "core/block.h"

namespace kjit {

struct SourceRange {
  uint64_t lo, hi;  // [lo, hi)
};

// Up to N ranges; an add that finds no room merges the two closest.
template <uint32_t N>
struct SourceRanges {
  SourceRange r[N];
  uint32_t n;

  void clear() { n = 0; }
  void add(uint64_t lo, uint64_t hi) {
    if (lo >= hi) return;
    for (uint32_t i = 0; i < n; i++) {
      if (lo <= r[i].hi && hi >= r[i].lo) {  // overlaps or touches
        r[i].lo = lo < r[i].lo ? lo : r[i].lo;
        r[i].hi = hi > r[i].hi ? hi : r[i].hi;
        return;
      }
    }
    if (n == N) merge_closest();
    r[n++] = {lo, hi};
  }
  template <uint32_t M>
  void add_all(const SourceRanges<M> &o) {
    for (uint32_t i = 0; i < o.n; i++) add(o.r[i].lo, o.r[i].hi);
  }

 private:
  static uint64_t gap(const SourceRange &a, const SourceRange &b) {
    return a.hi <= b.lo ? b.lo - a.hi : b.hi <= a.lo ? a.lo - b.hi : 0;
  }
  void merge_closest() {
    uint32_t bi = 0, bj = 1;
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = i + 1; j < n; j++)
        if (gap(r[i], r[j]) < gap(r[bi], r[bj])) bi = i, bj = j;
    r[bi].lo = r[bi].lo < r[bj].lo ? r[bi].lo : r[bj].lo;
    r[bi].hi = r[bi].hi > r[bj].hi ? r[bi].hi : r[bj].hi;
    r[bj] = r[--n];
  }
};

// Ranges a trace build collects: a trace of kMaxTraceBlocks blocks reads
// each block's code, and the look-ahead past it.
using TraceSources = SourceRanges<16>;
// A memoised live-in's (liveness.cc).
using LivenessSources = SourceRanges<3>;

// Where reads are noted now: a build's collector, a live-in's computation
// inside it, or nowhere (nullptr).  Under the engine lock.
extern TraceSources *g_trace_sources;
extern LivenessSources *g_liveness_sources;
// CodeReader's hook: [pc, pc + len) was read.
inline void note_source_read(uint64_t pc, uint64_t len) {
  if (g_liveness_sources) g_liveness_sources->add(pc, pc + len);
  if (g_trace_sources) g_trace_sources->add(pc, pc + len);
}

class SourceIndex {
 public:
  static constexpr uint32_t kMaxPagesPerRange = 8;

  // Buckets for about `traces` traces; false if the arena is full.
  bool init(Arena *arena, uint32_t traces);
  // `trace` (its first block) read [lo, hi).  False, and the index no
  // longer complete, when the arena has no room for the nodes.
  bool add(uint64_t lo, uint64_t hi, Block *trace);
  // Calls fn(trace) for each live trace with a range overlapping [lo, hi),
  // possibly more than once; skips and unlinks retired ones.
  template <typename Fn>
  void for_each_reader(uint64_t lo, uint64_t hi, Fn fn);
  bool complete() const { return complete_; }

 private:
  struct Node {
    uint64_t lo, hi;
    Block *trace;
    Node *next;
  };
  static uint32_t hash(uint64_t page) { return static_cast<uint32_t>((page * 0x9e3779b97f4a7c15ull) >> 40); }
  Node **bucket(uint64_t page) { return &buckets_[hash(page) & mask_]; }
  template <typename Fn>
  void scan(Node **head, uint64_t lo, uint64_t hi, Fn &fn);

  Arena *arena_ = nullptr;
  Node **buckets_ = nullptr;
  Node *wide_ = nullptr;
  uint32_t mask_ = 0;
  bool complete_ = false;
};

template <typename Fn>
void SourceIndex::scan(Node **head, uint64_t lo, uint64_t hi, Fn &fn) {
  for (Node **p = head; *p;) {
    Node *n = *p;
    if (n->trace->retired) {
      *p = n->next;  // its trace is unreachable: never a reader again
      continue;
    }
    if (n->lo < hi && lo < n->hi) fn(n->trace);
    p = &n->next;
  }
}

template <typename Fn>
void SourceIndex::for_each_reader(uint64_t lo, uint64_t hi, Fn fn) {
  if (!buckets_ || lo >= hi) return;
  scan(&wide_, lo, hi, fn);
  for (uint64_t page = lo >> 12; page <= (hi - 1) >> 12; page++) scan(bucket(page), lo, hi, fn);
}

}  // namespace kjit
