/* SPDX-License-Identifier: GPL-2.0 */
// The kernel's return, retpoline and ITS thunks as address ranges.  A thunk
// is part of the transfer that uses it: `jmp __x86_return_thunk` is a
// return and `call __x86_indirect_thunk_rax` is `call *%rax`, which is how
// the engine translates them.  The reference runner therefore does not
// count the instructions inside a thunk body as program instructions, and
// the writes a thunk body makes below the stack pointer are not program
// writes.
#ifndef KJIT_SIM_THUNKS_H
#define KJIT_SIM_THUNKS_H

#include <cstdint>
#include <vector>

#include "sim_symbols.h"

namespace kjit::sim {

class ThunkMap {
 public:
  ThunkMap() = default;
  explicit ThunkMap(const SymbolTable &symbols);
  bool inside(uint64_t pc) const;
  bool empty() const { return ranges_.empty(); }

 private:
  struct Range {
    uint64_t begin, end;
  };
  std::vector<Range> ranges_;  // sorted, disjoint
};

}  // namespace kjit::sim
#endif
