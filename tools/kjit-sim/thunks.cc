// SPDX-License-Identifier: GPL-2.0
#include "thunks.h"

#include "kjit/os_shim.h"

#include <algorithm>

namespace kjit::sim {

namespace {
bool is_thunk_name(const std::string &n) {
  static const char *const kReturnThunks[] = {KJIT_RETURN_THUNK_NAMES};
  for (const char *name : kReturnThunks)
    if (n == name) return true;
  return n == "__x86_return_thunk" || n.rfind("__x86_indirect_thunk_", 0) == 0 ||
         n.rfind("__x86_indirect_its_thunk_", 0) == 0 || n.rfind("__x86_indirect_jump_thunk_", 0) == 0 ||
         n.rfind("__x86_indirect_call_thunk_", 0) == 0;
}
}  // namespace

ThunkMap::ThunkMap(const SymbolTable &symbols) {
  const auto &all = symbols.all();
  for (size_t i = 0; i < all.size(); i++) {
    if (!is_thunk_name(all[i].name) || all[i].name.find("_array") != std::string::npos) continue;
    // A thunk ends where the next symbol at a higher address begins.
    uint64_t end = all[i].addr + 64;
    for (size_t j = i + 1; j < all.size(); j++)
      if (all[j].addr > all[i].addr) {
        end = std::min(end, all[j].addr);
        break;
      }
    ranges_.push_back({all[i].addr, end});
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const Range &a, const Range &b) { return a.begin < b.begin; });
}

bool ThunkMap::inside(uint64_t pc) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), pc,
                             [](uint64_t v, const Range &r) { return v < r.begin; });
  if (it == ranges_.begin()) return false;
  --it;
  return pc >= it->begin && pc < it->end;
}

}  // namespace kjit::sim
