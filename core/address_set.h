/* SPDX-License-Identifier: GPL-2.0 */
// A fixed-capacity set of code addresses (open addressing, linear probing).
// Writers hold the engine lock; readers need no lock: a slot goes from 0 to
// its address once, with one atomic store, and never back until the engine
// is re-initialised (which happens with no reader left).  Freestanding.
#pragma once
#include <stdint.h>

namespace kjit {

template <uint32_t kLog2Slots>
class AddressSet {
 public:
  static constexpr uint32_t kSlots = 1u << kLog2Slots;
  // Kept at three quarters full at most, so probes stay short and a lookup
  // of an absent address always meets an empty slot.
  static constexpr uint32_t kCapacity = kSlots / 4 * 3;

  bool contains(uint64_t addr) const {
    if (addr == 0) return false;
    for (uint32_t i = home(addr);; i = (i + 1) & (kSlots - 1)) {
      const uint64_t v = __atomic_load_n(&slots_[i], __ATOMIC_ACQUIRE);
      if (v == addr) return true;
      if (v == 0) return false;
    }
  }

  // False when the set is full (or addr is 0, which marks an empty slot).
  bool insert(uint64_t addr) {
    if (addr == 0) return false;
    if (contains(addr)) return true;
    if (count_ >= kCapacity) return false;
    uint32_t i = home(addr);
    while (slots_[i] != 0) i = (i + 1) & (kSlots - 1);
    __atomic_store_n(&slots_[i], addr, __ATOMIC_RELEASE);
    __atomic_store_n(&count_, count_ + 1, __ATOMIC_RELAXED);
    return true;
  }

  uint32_t size() const { return count_; }
  // Without the lock: a full set stays full until re-initialised.
  bool full() const { return __atomic_load_n(&count_, __ATOMIC_RELAXED) >= kCapacity; }

 private:
  static uint32_t home(uint64_t addr) {
    return static_cast<uint32_t>((addr * 0x9e3779b97f4a7c15ull) >> (64 - kLog2Slots));
  }

  uint64_t slots_[kSlots];
  uint32_t count_;
};

}  // namespace kjit
