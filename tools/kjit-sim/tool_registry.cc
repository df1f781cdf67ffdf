// SPDX-License-Identifier: GPL-2.0
// The example tools of plugins/, and how each result lines up with the
// reference runner's independent count.  Reports and references are
// formatted identically so that `kjit-sim run` compares them as text.
#include "tool_registry.h"

#include <map>
#include <set>
#include <sstream>

#include "kjit_examples.h"

namespace kjit::sim {
namespace {

// bbcount's count of each block start against the reference's.  A block the
// engine cut (a fragment) goes on at pc + len without a transfer, so the
// count there is not one of the reference's: those addresses are left out.
std::string bbcount_differences(const ReferenceCounts &ref) {
  std::map<uint64_t, uint64_t> counted;
  std::set<uint64_t> continuations;
  for (uint32_t i = 0; i < kjit_bbcount_blocks(); i++) {
    if (kjit_bbcount_is_fragment(i)) continuations.insert(kjit_bbcount_pc(i) + kjit_bbcount_len(i));
    if (uint64_t c = kjit_bbcount_count(i)) counted[kjit_bbcount_pc(i)] += c;
  }
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> both;  // pc -> {bbcount, reference}
  for (const auto &[pc, c] : counted) both[pc].first = c;
  for (const auto &[pc, c] : ref.block_starts) both[pc].second = c;
  std::ostringstream o;
  uint32_t differ = 0;
  for (const auto &[pc, c] : both) {
    if (continuations.count(pc) || c.first == c.second) continue;
    if (differ++ < 4) o << (differ > 1 ? ", " : "") << "0x" << std::hex << pc << std::dec << " " << c.first
                        << " (reference " << c.second << ")";
  }
  if (!differ) return "";
  return std::to_string(differ) + " of " + std::to_string(both.size()) + " block starts: " + o.str() +
         (differ > 4 ? ", ..." : "");
}

}  // namespace

const std::vector<Tool> &tools() {
  static const std::vector<Tool> kTools = {
      {"icount", [] { return kjit_icount_init(); }, kjit_example_icount,
       [] { return std::to_string(kjit_icount_result()); },
       [](const ReferenceCounts &c) { return std::to_string(c.instructions); }, nullptr},
      {"bbcount", [] { return kjit_bbcount_init(1 << 16); }, kjit_example_bbcount,
       [] { return std::to_string(kjit_bbcount_total()); },
       [](const ReferenceCounts &c) { return std::to_string(c.blocks); }, bbcount_differences},
      {"calltrace", [] { return kjit_calltrace_init(1 << 16); }, kjit_example_calltrace,
       [] {
         const kjit_call_ring *r = kjit_calltrace_ring();
         std::vector<uint64_t> trace;
         uint64_t first = r->head > r->mask + 1 ? r->head - (r->mask + 1) : 0;
         for (uint64_t i = first; i < r->head; i++) trace.push_back(r->target[i & r->mask]);
         return format_call_trace(trace);
       },
       [](const ReferenceCounts &c) { return format_call_trace(c.call_trace); }, nullptr},
      {"branch_hints", [] { return kjit_branch_hints_init(); }, kjit_example_branch_hints,
       [] {
         const kjit_branch_stats *s = kjit_branch_hints_result();
         ReferenceCounts c;
         c.cond_branches = s->executed;
         c.cond_taken = s->taken;
         c.cond_predicted = s->predicted_right;
         return format_branch_hints(c);
       },
       [](const ReferenceCounts &c) { return format_branch_hints(c); }, nullptr},
      {"lock_contention", [] { return kjit_lock_contention_init(); }, kjit_example_lock_contention,
       [] {
         const kjit_lock_stats *s = kjit_lock_contention_result();
         ReferenceCounts c;
         c.lock_cmpxchg = s->attempts;
         c.lock_cmpxchg_failed = s->failures;
         return format_lock_contention(c);
       },
       [](const ReferenceCounts &c) { return format_lock_contention(c); }, nullptr},
      {"entry_count", [] { return kjit_entry_count_init(1 << 12); }, kjit_example_entry_count,
       [] {
         uint32_t n = 0;
         const kjit_entry_count *e = kjit_entry_count_entries(&n);
         std::map<uint64_t, uint64_t> m;
         for (uint32_t i = 0; i < n; i++)
           if (e[i].pc && e[i].count) m[e[i].pc] += e[i].count;
         return format_routine_entries(m);
       },
       [](const ReferenceCounts &c) { return format_routine_entries(c.routine_entries); }, nullptr},
      {"branch_profile", [] { return kjit_branch_profile_init(1 << 12, 1 << 14); }, kjit_example_branch_profile,
       [] {
         std::map<uint64_t, std::pair<uint64_t, uint64_t>> m;
         for (uint32_t i = 0; i < kjit_branch_profile_count(); i++) {
           const uint64_t taken = kjit_branch_profile_taken(i), not_taken = kjit_branch_profile_not_taken(i);
           // Built but never decided (the run ended first): not executed.
           if (taken || not_taken) m[kjit_branch_profile_entry(i)->pc] = {taken, not_taken};
         }
         return format_branch_profile(kjit_bbcount_total(), m);
       },
       [](const ReferenceCounts &c) { return format_branch_profile(c.blocks, c.branch_outcomes); }, bbcount_differences},
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

std::string format_routine_entries(const std::map<uint64_t, uint64_t> &entries) {
  std::ostringstream o;
  o << entries.size() << " routines:";
  for (const auto &[pc, n] : entries) o << " 0x" << std::hex << pc << "=" << std::dec << n;
  return o.str();
}

std::string format_branch_hints(const ReferenceCounts &c) {
  std::ostringstream o;
  o << c.cond_branches << " conditional branches, " << c.cond_taken << " taken, " << c.cond_predicted
    << " as the layout predicts";
  return o.str();
}

std::string format_branch_profile(uint64_t blocks,
                                  const std::map<uint64_t, std::pair<uint64_t, uint64_t>> &outcomes) {
  std::ostringstream o;
  o << blocks << " blocks; " << outcomes.size() << " branches:";
  for (const auto &[pc, n] : outcomes) o << " 0x" << std::hex << pc << std::dec << "=" << n.first << "/" << n.second;
  return o.str();
}

std::string format_lock_contention(const ReferenceCounts &c) {
  std::ostringstream o;
  o << c.lock_cmpxchg << " lock cmpxchg, " << c.lock_cmpxchg_failed << " failed";
  return o.str();
}

}  // namespace kjit::sim
