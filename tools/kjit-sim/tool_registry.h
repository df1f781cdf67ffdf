/* SPDX-License-Identifier: GPL-2.0 */
// The example tools (plugins/) that `kjit-sim run --tool NAME` can load, and
// how each one's result lines up with the reference runner's count.
#ifndef KJIT_SIM_TOOL_REGISTRY_H
#define KJIT_SIM_TOOL_REGISTRY_H

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kjit/plugin.h"
#include "reference_runner.h"

namespace kjit::sim {

struct Tool {
  std::string name;
  // kjit_<name>_init(...): allocates the plugin's data; called after
  // kjit_engine_init, before registration.  May be empty.
  std::function<int()> init;
  // kjit_example_<name>(): the plugin to register.
  std::function<const kjit_plugin *()> plugin;
  // The plugin's result as text, read after the translated run while the
  // engine (and the plugin's data window) is still alive.
  std::function<std::string()> report;
  // The same quantity computed by the reference runner, as text.
  std::function<std::string(const ReferenceCounts &)> reference;
  // Optional, read like `report`: where the plugin's per-address results
  // differ from the reference's ("" when they agree).
  std::function<std::string(const ReferenceCounts &)> differences;
};

const std::vector<Tool> &tools();
const Tool *find_tool(const std::string &name);  // nullptr if unknown

// Formatting helpers for `reference` functions.
std::string format_call_trace(const std::vector<uint64_t> &trace);
std::string format_branch_hints(const ReferenceCounts &c);
// "B blocks; N branches: 0xpc=taken/not_taken ..." (address order).
std::string format_branch_profile(uint64_t blocks,
                                  const std::map<uint64_t, std::pair<uint64_t, uint64_t>> &outcomes);
std::string format_routine_entries(const std::map<uint64_t, uint64_t> &entries);
std::string format_lock_contention(const ReferenceCounts &c);

}  // namespace kjit::sim
#endif
