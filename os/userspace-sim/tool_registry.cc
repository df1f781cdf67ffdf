// To add a tool (plugins/kjit_examples.h), add a Tool below, e.g.
//
//   {"icount", [] { return kjit_icount_init(); }, kjit_example_icount,
//    [] { return std::to_string(kjit_icount_result()); },
//    [](const ReferenceCounts &c) { return std::to_string(c.instructions); }},
//
// include "kjit_examples.h", and link kjit_examples into kjit-sim
// (os/userspace-sim/CMakeLists.txt).
#include "tool_registry.h"

#include <sstream>

namespace kjit::sim {

const std::vector<Tool> &tools() {
  static const std::vector<Tool> kTools = {
      // Filled in as plugins/ lands.
  };
  return kTools;
}

const Tool *find_tool(const std::string &name) {
  for (const Tool &t : tools())
    if (t.name == name) return &t;
  return nullptr;
}

std::string format_call_trace(const std::vector<uint64_t> &trace) {
  std::ostringstream o;
  o << trace.size() << " calls:";
  for (uint64_t t : trace) o << " 0x" << std::hex << t;
  return o.str();
}

std::string format_branch_hints(const ReferenceCounts &c) {
  std::ostringstream o;
  o << c.cond_branches << " conditional branches, " << c.cond_taken << " taken, " << c.cond_predicted
    << " as the layout predicts";
  return o.str();
}

std::string format_lock_contention(const ReferenceCounts &c) {
  std::ostringstream o;
  o << c.lock_cmpxchg << " lock cmpxchg, " << c.lock_cmpxchg_failed << " failed";
  return o.str();
}

}  // namespace kjit::sim
