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
  std::map<int, uint64_t> lines;                      // line -> count
  std::map<std::string, std::pair<int, uint64_t>> functions;  // name -> line, entry count
  // Every function and line with code of the file is listed: it is the
  // primary source of a compilation unit read whole.  A header is not
  // (the other units it is inlined into were not read).
  bool complete = false;
};

// Per source file, as gcov lists them: for every compilation unit holding
// an entered function, every function with code in it (0: not entered)
// and every line with code (DebugInfo::unit_at's rows) of those
// functions, in the file the line table names (a header's lines in its
// own file).  A line's count is the most any of its rows ran within one
// function, summed over the functions it is compiled into (its inlined
// copies), as gcov counts a line of an inline function.
// An entered function no unit lists (no DWARF for it) gets the rows of its
// symbol's extent, and its file is not complete.
std::map<std::string, FileLines> line_coverage(const Recording &r, const Coverage &c,
                                               const DebugImages &dbg);

}  // namespace kjit::report
