/* SPDX-License-Identifier: GPL-2.0 */
// A bump allocator over host memory handed in by the OS shim: each epoch of
// the code cache keeps its records (blocks, exits, chain sites, tables) in
// one (see epoch.h).  No frees: an arena is reset as a whole when its epoch
// is reused.
#pragma once
#include "kjit/types.h"

namespace kjit {

class Arena {
 public:
  void init(uint8_t *base, uint64_t size) {
    base_ = base;
    size_ = size;
    used_ = 0;
  }
  // Zeroed memory, or nullptr when the arena is exhausted.
  void *alloc(uint64_t bytes, uint64_t align = 8) {
    uint64_t start = (used_ + align - 1) & ~(align - 1);
    if (start + bytes > size_ || start + bytes < start) return nullptr;
    used_ = start + bytes;
    __builtin_memset(base_ + start, 0, bytes);
    return base_ + start;
  }
  template <typename T>
  T *alloc_array(uint64_t n) {
    return static_cast<T *>(alloc(sizeof(T) * n, alignof(T)));
  }
  void reset() { used_ = 0; }
  uint64_t used() const { return used_; }
  uint64_t size() const { return size_; }
  bool contains(const void *p) const {
    auto *b = static_cast<const uint8_t *>(p);
    return b >= base_ && b < base_ + size_;
  }
  uint64_t offset_of(const void *p) const { return static_cast<const uint8_t *>(p) - base_; }
  void *at(uint64_t offset) const { return base_ + offset; }

 private:
  uint8_t *base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t used_ = 0;
};

}  // namespace kjit
