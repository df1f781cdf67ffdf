// SPDX-License-Identifier: GPL-2.0
#include "call_tree.h"

#include <algorithm>

namespace kjit::report {
namespace {

void fold_node(const Recording &r, const CallNode &n, const std::string &prefix,
               std::map<std::string, uint64_t> &out, bool by_time) {
  std::string key = prefix.empty() ? r.name_of(n.fn) : prefix + ";" + r.name_of(n.fn);
  for (const auto &ch : n.children) fold_node(r, *ch, key, out, by_time);
  out[key] += by_time ? n.self_time() : 1;
}

}  // namespace

uint64_t CallNode::self_time() const {
  uint64_t child_time = 0;
  for (const auto &ch : children) child_time += ch->duration();
  return duration() > child_time ? duration() - child_time : 0;
}

std::map<uint32_t, CallThread> call_trees(const Recording &r) {
  std::map<uint32_t, CallThread> threads;
  for (const auto &e : r.events) {
    CallThread &t = threads[e.pid];
    t.last = std::max(t.last, e.ns);
    // own_return: e is the frame's own return (else the frame returned
    // through code that was not translated, and e is some later event).
    auto close_top = [&](uint64_t ns, bool own_return) {
      CallNode *n = t.stack.back();
      const kjit_data_event *open = t.opened.back();
      n->end = std::max(ns, n->start);
      n->closed = true;
      n->insns_measured = own_return && (open->flags & e.flags & KJIT_DATA_EV_INSNS) &&
                          open->switches == e.switches && open->cpu == e.cpu && e.insns >= open->insns;
      n->insns = n->insns_measured ? e.insns - open->insns : 0;
      t.stack.pop_back();
      t.opened.pop_back();
    };
    if (e.type == KJIT_DATA_EV_ENTRY || e.type == KJIT_DATA_EV_CALL) {
      while (!t.stack.empty() && t.stack.back()->sp <= e.sp) close_top(e.ns, false);
      if (e.type == KJIT_DATA_EV_CALL && t.stack.empty()) continue;  // outside any entry
      auto n = std::make_unique<CallNode>();
      n->fn = e.pc; n->sp = e.sp; n->start = e.ns; n->cpu = e.cpu;
      CallNode *raw = n.get();
      (t.stack.empty() ? t.roots : t.stack.back()->children).push_back(std::move(n));
      t.stack.push_back(raw);
      t.opened.push_back(&e);
    } else {
      while (!t.stack.empty() && t.stack.back()->sp <= e.sp + 8) {
        bool mine = t.stack.back()->sp == e.sp + 8;
        close_top(e.ns, mine);
        if (mine) break;
      }
    }
  }
  for (auto &[pid, t] : threads)
    for (CallNode *n : t.stack) n->end = std::max(t.last, n->start);   // unfinished
  return threads;
}

std::map<std::string, uint64_t> folded_stacks(const Recording &r, bool by_time) {
  std::map<std::string, uint64_t> out;
  for (const auto &[pid, t] : call_trees(r))
    for (const auto &root : t.roots) fold_node(r, *root, "", out, by_time);
  return out;
}

}  // namespace kjit::report
