/* SPDX-License-Identifier: GPL-2.0 */
// The conditional branches a branches recording reports on: those it
// counted, and with a vmlinux every other conditional branch of the
// functions the workload entered (never reached, or reached but not
// counted because the table was full), so branch coverage shows what was
// missed as lcov's line coverage does.
#pragma once
#include <cstdint>
#include <vector>

#include "coverage.h"
#include "data_file.h"
#include "debug_images.h"

namespace kjit::report {

struct BranchSite {
  uint64_t addr = 0;       // running address of the branch
  uint64_t target = 0;     // running address it goes to when taken
  uint64_t taken = 0, not_taken = 0;
  bool counted = false;    // in the recording's BRANCHES table
  const Symbol *function = nullptr;
  // The layout's prediction: a backward branch taken, a forward one not.
  bool predicted_taken() const { return target <= addr; }
  uint64_t correct() const { return predicted_taken() ? taken : not_taken; }
  uint64_t incorrect() const { return predicted_taken() ? not_taken : taken; }
};

// In address order.  dbg may be null (the counted branches only).
std::vector<BranchSite> branch_sites(const Recording &r, const Coverage &cov, const DebugImages *dbg);

}  // namespace kjit::report
