/* SPDX-License-Identifier: GPL-2.0 */
// A function's instructions (Zydis over the vmlinux's or .ko's bytes, AT&T syntax)
// with the executions of each, for annotate and its JSON form.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "coverage.h"
#include "data_file.h"
#include "debug_images.h"

namespace kjit::report {

struct AnnotatedInsn {
  uint32_t offset = 0;   // from the function's start
  std::string text;      // "(bytes)" where Zydis cannot decode
  uint64_t count = 0;    // executions (Coverage::count_at)
  std::string file;      // "" without a line
  int line = 0;
};

// False when the function's bytes are not in the vmlinux's or its .ko's text.
bool annotate_function(const Symbol &s, const Coverage &cov, const DebugImages &dbg,
                       std::vector<AnnotatedInsn> &out);

// The instructions the recorded blocks executed in s (count x ninsn):
// what annotate's counts must sum to.
uint64_t executed_in(const Recording &r, const Symbol &s);

}  // namespace kjit::report
