/* SPDX-License-Identifier: GPL-2.0 */
// Call trees rebuilt from a callstack recording's events.  Per thread a
// stack of frames (function, rsp of its call, start time) is rebuilt as
// kjitctl's live view does: a frame is over when its thread calls or
// enters at an rsp >= its own, or returns with rsp >= call rsp - 8.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "data_file.h"

namespace kjit::report {

struct CallNode {
  uint64_t fn = 0, sp = 0, start = 0, end = 0;  // end: the thread's last event when unfinished
  uint16_t cpu = 0;
  bool closed = false;                          // its return was seen
  // Instructions in translated code from its entry or call event to its
  // own return event; measured only when both events carry counts and the
  // thread was not switched out in between (data_format.h).
  bool insns_measured = false;
  uint64_t insns = 0;
  std::vector<std::unique_ptr<CallNode>> children;
  uint64_t duration() const { return end - start; }
  // Time in the function itself, not in its callees.
  uint64_t self_time() const;
};

struct CallThread {
  std::vector<std::unique_ptr<CallNode>> roots;
  std::vector<CallNode *> stack;
  std::vector<const kjit_data_event *> opened;  // the event that opened each frame of stack
  uint64_t last = 0;
};

// Thread id -> its call trees, in event order.
std::map<uint32_t, CallThread> call_trees(const Recording &r);

// "a;b;c" -> calls (by_time false) or self time in ns (by_time true).
std::map<std::string, uint64_t> folded_stacks(const Recording &r, bool by_time);

}  // namespace kjit::report
