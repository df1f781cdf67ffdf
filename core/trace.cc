// SPDX-License-Identifier: GPL-2.0
#include "core/trace.h"

#include "core/departures.h"
#include "core/engine_state.h"
#include "core/linker.h"
#include "core/source_deps.h"

namespace kjit {

namespace {

// The blocks laid out by one build_block, in code order; their stubs come
// after the last one.  Used under the engine lock (too big for a kernel
// stack, like g_build).
struct Trace {
  TraceMember members[kMaxTraceBlocks];
  uint32_t n;
  uint32_t stub_bytes;   // the members' stubs together
  uint32_t frames;       // frames opened so far
  // At depth d > 0: the return address the call entering it pushed, and
  // the frame; frame_at[0] = 0.
  uint64_t return_at[kMaxTraceBlocks + 1];
  uint32_t frame_at[kMaxTraceBlocks + 1];
};
constinit Trace g_trace{};

// The block after a trace's last one, if it may be laid out there: its
// address, depth and frame.
struct Follower {
  uint64_t pc;
  uint32_t depth, frame;
  uint64_t call_return;  // the call into it pushed this, or 0
};

}  // namespace

bool may_lead_run(const BuildContext &ctx, uint32_t depth) {
  for (uint32_t i = 0; i < ctx.n; i++)
    if (ctx.insns[i].is_extable_site) return false;
  if (ctx.early == EarlyEnd::kContinue) return depth > 0;
  if (!ctx.has_terminator()) return false;
  const x86::Insn &in = ctx.insns[ctx.n - 1].insn;
  switch (in.cf) {
    case KJIT_CF_CALL:
    case KJIT_CF_FENTRY:
      if (g_engine.is_stop(in.target) || in.target == g_engine.facts.schedule_funnel) return false;
      if (kjit_os_may_translate(in.target)) return true;        // into the callee's copy
      return depth > 0 && kjit_os_callable_natively(in.target);  // a leaf called as is
    case KJIT_CF_JMP:
      return depth > 0;
    case KJIT_CF_JCC: {  // into the copy of its not-taken side
      const uint64_t fall = in.pc + in.length;
      return depth > 0 && in.jcc_kind == x86::JccKind::kPlain && !g_engine.is_stop(fall) &&
             kjit_os_may_translate(fall);
    }
    case KJIT_CF_RET:  // without a compare, into the caller's copy
      return depth > 1 && ctx.predicted_return && !g_engine.is_stop(ctx.predicted_return) &&
             return_slot_untouched(in);
    default:
      return false;
  }
}


namespace {

// Whether the block at the end of `t` may be followed by its tail's target
// instead of the jump there, and where that block would be: a translated
// target not in the same frame of the trace already (no loop unrolled)
// and, back in the first block's frame, not built yet (built once).  A
// call's target is the trace's own copy even where the function is built:
// its return then knows where it goes.
bool may_follow(const Epoch &epoch, const Trace &t, Follower *f) {
  const TraceMember &last = t.members[t.n - 1];
  const ExitPlan &p = last.plan;
  if (!p.tail || t.n >= kMaxTraceBlocks || t.n >= g_engine.opt.max_trace_blocks) return false;
  *f = {p.tail->target_pc, last.depth, last.frame, 0};
  if (g_engine.is_stop(f->pc) || !kjit_os_may_translate(f->pc)) return false;
  if (p.call_return) {
    f->depth++;
    f->frame = t.frames + 1;
    f->call_return = p.call_return;
  } else if (p.predicted_return) {
    f->depth--;
    f->frame = t.frame_at[f->depth];
  }
  for (uint32_t i = 0; i < t.n; i++)
    if (t.members[i].block->orig_pc == f->pc && t.members[i].frame == f->frame) return false;
  return f->depth > 0 || !epoch.table.find(f->pc);
}

// Links the trace's blocks: its own exits whose targets exist, then every
// exit that was waiting for one of its blocks.  The trace's own copies
// (depth > 0) are not in the table.  `sources`: what its build read.
void publish(Epoch &epoch, const Trace &t, TraceSources &sources) {
  Block *head = t.members[0].block;
  // An exit to code that may not be translated now is linked to it natively
  // below: that depends on the target (a module becoming live there).
  for (uint32_t k = 0; k < t.n; k++)
    for (uint32_t i = 0; i < t.members[k].plan.nexits; i++)
      if (!kjit_os_may_translate(t.members[k].plan.exits[i]->target_pc))
        sources.add(t.members[k].plan.exits[i]->target_pc, t.members[k].plan.exits[i]->target_pc + 1);
  head->trace_index = epoch.nblocks;
  head->trace_blocks = static_cast<uint8_t>(t.n);
  for (uint32_t i = 0; i < sources.n; i++) epoch.sources.add(sources.r[i].lo, sources.r[i].hi, head);
  for (uint32_t k = 0; k < t.n; k++) {
    t.members[k].block->trace = head;
    epoch.blocks[epoch.nblocks++] = t.members[k].block;
    if (t.members[k].depth == 0) t.members[k].slot->block = t.members[k].block;
    if (t.members[k].plan.predicted) g_engine.stats.predicted_returns++;
    if (t.members[k].plan.unchecked) g_engine.stats.unchecked_returns++;
  }
  for (uint32_t k = 0; k < t.n; k++) {
    const ExitPlan &plan = t.members[k].plan;
    for (uint32_t i = 0; i < plan.nexits; i++) {
      Exit *e = plan.exits[i];
      if (e->native_why) continue;  // linked when first taken (kjit_engine_direct_exit)
      if (!kjit_os_may_translate(e->target_pc) || g_engine.is_stop(e->target_pc)) {
        link_exit_native(epoch, e, departure_for_native_target(e->target_pc));
        continue;
      }
      // An exit that knows its function's return address (a call the
      // trace did not follow, any exit of a callee's copy) stays on its
      // stub: the dispatcher links it to a copy made for that address.
      if (e->call_return) continue;
      TableSlot *ts = epoch.table.slot(e->target_pc);
      if (!ts) continue;  // stays on its stub: the dispatcher serves it
      if (ts->block) {
        link_exit(epoch, e, ts->block);
      } else {
        e->next_waiting = ts->waiting;
        ts->waiting = e;
      }
    }
    if (t.members[k].depth == 0) link_waiting(epoch, t.members[k].slot, t.members[k].block);
  }
}

// What the trace being built read (source_deps.h), collected while it lives.
constinit TraceSources g_build_sources{};
class CollectSources {
 public:
  CollectSources() : outer_(g_trace_sources) {
    g_build_sources.clear();
    g_trace_sources = &g_build_sources;
  }
  ~CollectSources() { g_trace_sources = outer_; }
  CollectSources(const CollectSources &) = delete;
  CollectSources &operator=(const CollectSources &) = delete;

 private:
  TraceSources *outer_;
};

// build_block and build_call_copy: the trace from `pc`, at depth 1 with
// `call_return` pushed when that is not 0.
BuildResult build_trace(Epoch &epoch, uint64_t pc, bool routine_start, uint64_t call_return, Block **out) {
  CollectSources collect;
  Trace &t = g_trace;
  t.n = 0;
  t.stub_bytes = 0;
  t.frames = call_return ? 1 : 0;
  t.frame_at[0] = 0;
  t.frame_at[1] = 1;
  t.return_at[1] = call_return;
  uint32_t start = epoch.code_used;
  BuildResult r =
      emit_block(epoch, pc, routine_start, start, 0, 0, false, call_return, call_return ? 1 : 0, RunLink::kNone,
                 &t.members[0]);
  if (r != BuildResult::kBuilt) return r;
  t.members[0].depth = t.members[0].frame = call_return ? 1 : 0;
  t.n = 1;
  t.stub_bytes = t.members[0].stub_bytes;
  // Lay the tail's target where the tail jump was, while that succeeds.
  Follower f;
  while (may_follow(epoch, t, &f)) {
    TraceMember &prev = t.members[t.n - 1];
    uint32_t tail_at = prev.block->code_offset + prev.plan.tail_at;
    uint32_t tail_len = prev.plan.tail_end - prev.plan.tail_at;
    uint8_t tail_code[24];
    if (tail_len > sizeof(tail_code)) break;
    __builtin_memcpy(tail_code, epoch.write_at(tail_at), tail_len);
    TraceMember next;
    // Without the tail's stub, not needed if this works.
    uint64_t predicted = f.depth == 0 ? 0 : f.call_return ? f.call_return : t.return_at[f.depth];
    // A copy (in no table) is entered only from prev's end, which reaches
    // it always, or when prev's branch is not taken.
    RunLink link = RunLink::kNone;
    if (f.depth > 0 && prev.leaves_only_at_end)
      link = prev.plan.tail_always      ? RunLink::kAlways
             : prev.plan.tail_not_taken ? RunLink::kUnlessTaken
                                        : RunLink::kNone;
    if (emit_block(epoch, f.pc, prev.plan.tail->is_call, tail_at, t.n, t.stub_bytes - arch::kStubSize, true,
                   predicted, f.depth, link, &next) != BuildResult::kBuilt) {
      __builtin_memcpy(epoch.write_at(tail_at), tail_code, tail_len);
      break;
    }
    next.depth = f.depth;
    next.frame = f.frame;
    if (f.call_return) {
      t.frames = f.frame;
      t.return_at[f.depth] = f.call_return;
      t.frame_at[f.depth] = f.frame;
    }
    prev.plan.nexits--;  // the tail exit, last (ExitPlan::tail)
    prev.plan.tail = nullptr;
    prev.stub_bytes -= arch::kStubSize;
    prev.block->code_size = prev.plan.tail_at;
    prev.end = tail_at;
    t.members[t.n++] = next;
    t.stub_bytes += next.stub_bytes - arch::kStubSize;
    g_engine.stats.trace_fallthroughs++;
  }
  uint32_t stubs_at = t.members[t.n - 1].end;
  x86::CodeWriter w(epoch.write_at(stubs_at), epoch.exec_at(stubs_at), epoch.code_size - stubs_at);
  for (uint32_t k = 0; k < t.n; k++)
    if (!emit_stubs(epoch, w, stubs_at, t.members[k].plan)) return BuildResult::kCacheFull;
  epoch.code_used = stubs_at + w.size();
  kjit_os_code_written(epoch.exec_at(start), epoch.code_used - start);
  publish(epoch, t, g_build_sources);
  *out = t.members[0].block;
  return BuildResult::kBuilt;
}

}  // namespace

BuildResult build_block(Epoch &epoch, uint64_t pc, bool routine_start, Block **out) {
  return build_trace(epoch, pc, routine_start, 0, out);
}

BuildResult build_call_copy(Epoch &epoch, uint64_t pc, bool routine_start, uint64_t call_return, Block **out) {
  TableSlot *slot = epoch.copies.slot(Epoch::copy_key(pc, call_return));
  if (!slot) return BuildResult::kCacheFull;
  BuildResult r = build_trace(epoch, pc, routine_start, call_return, out);
  if (r != BuildResult::kBuilt) return r;
  (*out)->copy_return = call_return;
  if (!slot->block) slot->block = *out;
  g_engine.stats.call_copies++;
  return r;
}

}  // namespace kjit
