// SPDX-License-Identifier: GPL-2.0
// Reference counting over a single-stepped original run.
#include "reference_runner.h"

#include <capstone/capstone.h>

#include "capstone_class.h"
#include "kjit/plugin.h"

namespace kjit::sim {
namespace {

constexpr uint64_t kZF = 1u << 6;

bool in_group(const cs_insn *insn, uint8_t group) {
  const cs_detail *d = insn->detail;
  for (uint8_t i = 0; i < d->groups_count; i++)
    if (d->groups[i] == group) return true;
  return false;
}

}  // namespace

InsnClassifier::InsnClassifier() {
  csh h = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK) {
    cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
    handle_ = h;
  }
}

InsnClassifier::~InsnClassifier() {
  if (handle_) {
    csh h = handle_;
    cs_close(&h);
  }
}

bool InsnClassifier::classify(uint64_t pc, const uint8_t *bytes, size_t len, InsnClass *out) {
  auto it = cache_.find(pc);
  if (it != cache_.end()) {
    *out = it->second;
    return true;
  }
  if (!handle_) return false;
  cs_insn *insn = nullptr;
  if (cs_disasm(handle_, bytes, len, pc, 1, &insn) != 1) return false;
  InsnClass c;
  c.length = insn->size;
  c.text = std::string(insn->mnemonic) + (insn->op_str[0] ? " " : "") + insn->op_str;
  const cs_x86 &x = insn->detail->x86;
  const bool jump = in_group(insn, CS_GRP_JUMP);
  c.call = in_group(insn, CS_GRP_CALL);
  // Where a counted block ends is kjit_cf_ends_block, the definition the
  // kernel tools use; the class is Capstone's.  A jmp to the return thunk
  // is a jmp, so it ends the block like the ret it replaces.  A transfer
  // Capstone names outside the classes (-1) ends one too.
  const int cf = capstone_cf_class(insn);
  c.transfer = cf < 0 || kjit_cf_ends_block(static_cast<kjit_cf_class>(cf));
  c.conditional = jump && insn->id != X86_INS_JMP && insn->id != X86_INS_LJMP;
  if ((jump || c.call) && x.op_count == 1 && x.operands[0].type == X86_OP_IMM)
    c.direct_target = static_cast<uint64_t>(x.operands[0].imm);
  c.rep = x.prefix[0] == X86_PREFIX_REP || x.prefix[0] == X86_PREFIX_REPNE;
  c.lock_cmpxchg = x.prefix[0] == X86_PREFIX_LOCK && insn->id == X86_INS_CMPXCHG;
  cs_free(insn, 1);
  cache_.emplace(pc, c);
  *out = c;
  return true;
}

bool InsnClassifier::classify(const Emulator &emu, uint64_t pc, InsnClass *out) {
  uint8_t buf[15];
  size_t n = 0;
  // The instruction may end right before an unmapped page: read byte-wise
  // past the first failure.
  while (n < sizeof buf && emu.read(pc + n, buf + n, 1)) n++;
  return n > 0 && classify(pc, buf, n, out);
}

ReferenceCounts repeated(const ReferenceCounts &c, uint32_t times) {
  ReferenceCounts r = c;
  r.instructions *= times;
  r.blocks *= times;
  for (auto &[pc, n] : r.block_starts) n *= times;
  r.call_trace.clear();
  for (uint32_t i = 0; i < times; i++) r.call_trace.insert(r.call_trace.end(), c.call_trace.begin(), c.call_trace.end());
  for (auto &[pc, n] : r.routine_entries) n *= times;
  r.cond_branches *= times;
  r.cond_taken *= times;
  r.cond_predicted *= times;
  for (auto &[pc, tn] : r.branch_outcomes) tn = {tn.first * times, tn.second * times};
  r.lock_cmpxchg *= times;
  r.lock_cmpxchg_failed *= times;
  return r;
}

ReferenceCounter::ReferenceCounter(uint64_t entry_pc, const ThunkMap *thunks)
    : entry_pc_(entry_pc), thunks_(thunks) {}

void ReferenceCounter::attach(Emulator &emu) {
  emu.add_code_hook(1, ~uint64_t{0}, [this](Emulator &e, uint64_t pc, uint32_t) { on_insn(e, pc); });
}

void ReferenceCounter::resolve_previous(Emulator &emu, uint64_t next_pc) {
  if (!have_prev_) return;
  if (prev_.conditional) {
    const bool taken = next_pc != prev_pc_ + prev_.length;
    const bool backward = prev_.direct_target != 0 && prev_.direct_target <= prev_pc_;
    counts_.cond_branches++;
    if (taken) counts_.cond_taken++;
    if (taken == backward) counts_.cond_predicted++;
    auto &outcome = counts_.branch_outcomes[prev_pc_];
    (taken ? outcome.first : outcome.second)++;
  }
  if (prev_.lock_cmpxchg) {
    counts_.lock_cmpxchg++;
    if (!(emu.rflags() & kZF)) counts_.lock_cmpxchg_failed++;
  }
}

void ReferenceCounter::on_insn(Emulator &emu, uint64_t pc) {
  // Unicorn calls the code hook once per iteration of a rep-prefixed
  // string instruction; the plugins see one instruction.  Re-executing the
  // same pc without a transfer in between can only be such an iteration.
  if (have_prev_ && pc == prev_pc_ && prev_.rep && !prev_.transfer) return;
  // Inside a thunk the transfer that entered it is still under way: the
  // instruction after the thunk is the transfer's target.
  if (thunks_ && thunks_->inside(pc)) return;
  resolve_previous(emu, pc);
  if (first_) {
    first_ = false;
    counts_.blocks++;
    counts_.block_starts[pc]++;
    counts_.routine_entries[entry_pc_]++;
  } else if (have_prev_ && prev_.transfer) {
    counts_.blocks++;
    counts_.block_starts[pc]++;
    if (prev_.call) {
      const uint64_t target = call_target_ ? call_target_ : pc;
      counts_.call_trace.push_back(target);
      counts_.routine_entries[target]++;
    }
  }
  call_target_ = 0;
  counts_.instructions++;
  InsnClass c;
  if (!classifier_.classify(emu, pc, &c)) c = InsnClass{};  // the run will fault here
  prev_ = c;
  prev_pc_ = pc;
  have_prev_ = true;
}

void ReferenceCounter::finish(Emulator &emu) {
  // The final instruction's branch outcome and flags are visible now; the
  // sentinel itself is not a block of the program.
  resolve_previous(emu, emu.rip());
  have_prev_ = false;
}

ReferenceResult run_reference(const Capture &cap, const ReferenceOptions &opt) {
  ReferenceResult res;
  Emulator emu;
  std::string err = emu.load_capture(cap);
  if (err.empty()) err = emu.map_sentinel(cap.sentinel);
  if (err.empty()) err = emu.map_stack(cap.regs.gpr[4], opt.stack_size);
  if (err.empty() && !emu.push(cap.sentinel)) err = "cannot push the sentinel: stack not writable";
  if (!err.empty()) {
    res.error = err;
    return res;
  }
  ThunkMap thunks;
  if (opt.symbols) thunks = ThunkMap(*opt.symbols);
  ReferenceCounter counter(cap.entry_pc, opt.symbols ? &thunks : nullptr);
  counter.attach(emu);
  res.run = emu.run(cap.entry_pc, cap.sentinel, opt.budget);
  counter.finish(emu);
  res.counts = counter.counts();
  res.final_regs = emu.regs();
  for (const MemWrite &w : emu.writes())
    if (!thunks.inside(w.pc)) res.writes.push_back(w);  // a thunk's scratch is not the program's
  return res;
}

}  // namespace kjit::sim
