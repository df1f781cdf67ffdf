/* SPDX-License-Identifier: GPL-2.0 */
// Counts per instruction address and per source line, from a recording's
// blocks.  Every execution runs through one dynamic block, and blocks may
// overlap (a jump into the middle of a block starts a block of its own), so
// an instruction's count is the sum over the blocks that hold it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data_file.h"
#include "debug_images.h"

namespace kjit::report {

struct Coverage {
  // [start, end) of every block, recorded addresses, with its count
  std::vector<kjit_data_block> blocks;
  // Executions of the instruction at recorded address `a` (0: not run).
  uint64_t count_at(uint64_t a) const;
  // The functions (symbols) with at least one executed block.
  std::vector<const Symbol *> entered(const Recording &r) const;
};

Coverage make_coverage(const Recording &r);

struct FileLines {
  std::map<int, uint64_t> lines;                      // line -> count (max over its rows)
  std::map<std::string, std::pair<int, uint64_t>> functions;  // name -> first line, entry count
};

// Per source file, the lines of the entered functions, executed or not.
std::map<std::string, FileLines> line_coverage(const Recording &r, const Coverage &c,
                                               const DebugImages &dbg);

}  // namespace kjit::report
