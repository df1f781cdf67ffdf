// SPDX-License-Identifier: GPL-2.0
// Predicated indirect chains: each appended link compares rcx with its
// target and, on a hit, restores the program's rcx and jumps to the copy;
// the last link's miss jump goes to the site's fallback.  A return site's
// links compare the return slot itself.  Checked on the bytes (decoded) and
// by running the chain on the simulator's CPU.
#include "core/indirect_chain.h"

#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

constexpr uint64_t kProgramRcx = 0x1234567890abcdefull;

class ChainTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    make_site();
  }
  void make_site() {
    // The site: a patchable jmp to its fallback, which here is the miss
    // stub itself (call gate_indirect ; .long 0).
    site_ = active().arena.alloc_array<ChainSite>(1);
    site_exec_ = active().exec_at(emit([&](x86::CodeWriter &w, uint32_t at) {
      int32_t f = w.jmp_patchable(w.here());
      site_->tail_field = at + static_cast<uint32_t>(f);
      site_->fallback = site_->miss_stub = at + w.size();
      w.call(test::kGateIndirect);
      w.u32(0);
      w.patch_rel32(static_cast<uint32_t>(f), active().exec_at(site_->fallback));
    }));
    // Two "translations" the hits jump to.
    dest_[0] = active().exec_at(emit([](x86::CodeWriter &w, uint32_t) { w.byte(0xcc); }));
    dest_[1] = active().exec_at(emit([](x86::CodeWriter &w, uint32_t) { w.byte(0xcc); }));
    dest_[2] = active().exec_at(emit([](x86::CodeWriter &w, uint32_t) { w.byte(0xcc); }));
    for (int i = 0; i < 3; i++) {
      blk_[i] = active().arena.alloc_array<Block>(1);
      blk_[i]->exec = dest_[i];
    }
  }

  // Runs the site with `target` in rcx and the program's rcx at [rsp]
  // until `expect_at`.
  sim::RunResult run_site(uint64_t target, uint64_t expect_at, std::unique_ptr<sim::Emulator> *out) {
    auto emu = emulator();
    uint64_t sp = kStackTop - 0x100;
    emu->write(sp, &kProgramRcx, 8);
    emu->set_gpr(KJIT_REG_RSP, sp);
    emu->set_gpr(KJIT_REG_RCX, target);
    emu->set_rflags(0x2 | 0x1 | 0x40 | 0x80);  // CF ZF SF: must survive
    sim::RunResult r = emu->run(site_exec_, expect_at, 200);
    *out = std::move(emu);
    return r;
  }

  ChainSite *site_ = nullptr;
  uint64_t site_exec_ = 0;
  uint64_t dest_[3] = {};
  Block *blk_[3] = {};  // the translations at dest_
};

TEST_F(ChainTest, AppendedLinkComparesItsTargetAndJumpsToItsCopy) {
  uint32_t link = active().code_used;
  ASSERT_TRUE(chain_append(active(), site_, kText + 0x40, blk_[0], 0));
  // The site's jump now leads to the link.
  EXPECT_EQ(branch_target(site_exec_), active().exec_at(link));
  // lea rcx, [rcx - T]
  const uint8_t *l = host(active().exec_at(link));
  ASSERT_EQ(l[0], 0x48);
  ASSERT_EQ(l[1], 0x8d);
  ASSERT_EQ(l[2], 0x89);
  int32_t disp;
  memcpy(&disp, l + 3, 4);
  EXPECT_EQ(static_cast<int64_t>(disp), -static_cast<int64_t>(kText + 0x40));
  // jrcxz hit ; hit: pop rcx ; jmp copy
  x86::Insn jrcxz = decode(active().exec_at(link + 7));
  EXPECT_EQ(jrcxz.jcc_kind, x86::JccKind::kJrcxz);
  EXPECT_EQ(host(jrcxz.target)[0], 0x59);  // pop rcx
  EXPECT_EQ(branch_target(jrcxz.target + 1), dest_[0]);
  // The miss path restores rcx and goes on to the fallback.
  uint64_t miss = active().exec_at(link + 9);
  memcpy(&disp, host(miss) + 3, 4);
  EXPECT_EQ(static_cast<int64_t>(disp), static_cast<int64_t>(kText + 0x40));
  EXPECT_EQ(branch_target(miss + 7), active().exec_at(site_->fallback));
  EXPECT_EQ(site_->links, 1u);
}

TEST_F(ChainTest, SecondLinkFollowsTheFirstAndTheTailGoesToTheFallback) {
  ASSERT_TRUE(chain_append(active(), site_, kText + 0x40, blk_[0], 0));
  uint32_t first_tail = site_->tail_field;
  uint32_t second = active().code_used;
  ASSERT_TRUE(chain_append(active(), site_, kText + 0x80, blk_[1], 0));
  // The first link's miss now leads to the second; the second's to the fallback.
  EXPECT_EQ(branch_target(active().exec_at(first_tail - 1)), active().exec_at(second));
  EXPECT_EQ(branch_target(active().exec_at(site_->tail_field - 1)), active().exec_at(site_->fallback));
  EXPECT_EQ(site_->links, 2u);
}

TEST_F(ChainTest, RunningTheChainHitsEachTargetAndMissesToTheGate) {
  ASSERT_TRUE(chain_append(active(), site_, kText + 0x40, blk_[0], 0));
  ASSERT_TRUE(chain_append(active(), site_, kText + 0x80, blk_[1], 0));
  const uint64_t sp = kStackTop - 0x100;
  for (int i = 0; i < 2; i++) {
    std::unique_ptr<sim::Emulator> emu;
    sim::RunResult r = run_site(kText + 0x40 * (i + 1), dest_[i], &emu);
    ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << i << ": " << r.message;
    EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kProgramRcx) << i;
    EXPECT_EQ(emu->gpr(KJIT_REG_RSP), sp + 8) << i;  // the rcx slot is dropped
    EXPECT_EQ(emu->rflags() & 0xc1, 0xc1u) << i;
  }
  // A target no link knows: the miss stub calls the gate with the chain state.
  std::unique_ptr<sim::Emulator> emu;
  sim::RunResult r = run_site(kText + 0xc0, test::kGateIndirect, &emu);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kText + 0xc0);
  uint64_t ret = 0, saved = 0;
  emu->read_u64(emu->gpr(KJIT_REG_RSP), &ret);
  emu->read_u64(emu->gpr(KJIT_REG_RSP) + 8, &saved);
  EXPECT_EQ(ret, active().exec_at(site_->miss_stub) + 5);
  EXPECT_EQ(saved, kProgramRcx);
  EXPECT_EQ(emu->rflags() & 0xc1, 0xc1u);
}

TEST_F(ChainTest, FullChainRefusesAndLeavesTheCodeAlone) {
  ASSERT_EQ(init([](kjit_engine_options *o) { o->max_chain_length = 1; }), 0);
  make_site();
  ASSERT_TRUE(chain_append(active(), site_, kText + 0x40, blk_[0], 0));
  uint32_t used = active().code_used, tail = site_->tail_field;
  uint64_t links = stats().chain_links;
  EXPECT_FALSE(chain_append(active(), site_, kText + 0x80, blk_[1], 0));
  EXPECT_EQ(active().code_used, used);
  EXPECT_EQ(site_->tail_field, tail);
  EXPECT_EQ(branch_target(active().exec_at(tail - 1)), active().exec_at(site_->fallback));
  EXPECT_EQ(stats().chain_links, links);
}

TEST_F(ChainTest, TargetBeyondAnImmediateIsRefused) {
  uint32_t used = active().code_used;
  EXPECT_FALSE(chain_append(active(), site_, 0x0000900000000000ull, blk_[0], 0));
  EXPECT_EQ(active().code_used, used);
  EXPECT_EQ(branch_target(site_exec_), active().exec_at(site_->fallback));
}

// A return site as the block builder lays it out without an IBL, its tail
// to the return swap (mov rcx, [rsp + 8]; pop qword [rsp]), then
// `call gate_indirect ; .long 0`.
class ReturnChainTest : public ChainTest {
 protected:
  void SetUp() override {
    ChainTest::SetUp();
    site_->is_return = 1;
    site_->abi_return = abi_return();
    site_exec_ = active().exec_at(emit([&](x86::CodeWriter &w, uint32_t at) {
      emit_return_site(w, at, site_);
      site_->fallback = at + w.size();
      emit_return_fallback(w, *site_);
      site_->miss_stub = at + w.size();
      w.call(test::kGateIndirect);
      w.u32(0);
      w.patch_rel32(site_->tail_field - at, active().exec_at(site_->fallback));
    }));
  }
  virtual bool abi_return() const { return false; }
  // Runs the site as a `ret` with `ret_to` on the stack and the program's
  // rcx in rcx, until `expect_at`.
  sim::RunResult run_return(uint64_t ret_to, uint64_t expect_at, std::unique_ptr<sim::Emulator> *out) {
    auto emu = emulator_with_data();
    emu->write(kSp, &ret_to, 8);
    emu->set_gpr(KJIT_REG_RSP, kSp);
    emu->set_gpr(KJIT_REG_RCX, kProgramRcx);
    emu->set_rflags(kFlags);
    sim::RunResult r = emu->run(site_exec_, expect_at, 200);
    *out = std::move(emu);
    return r;
  }
  // Runs a return to `ret_to`, which no link knows, to the gate: it gets
  // the address in rcx and the program's rcx in the slot.
  std::unique_ptr<sim::Emulator> run_miss_to_gate(uint64_t ret_to) {
    std::unique_ptr<sim::Emulator> emu;
    sim::RunResult r = run_return(ret_to, test::kGateIndirect, &emu);
    EXPECT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
    EXPECT_EQ(emu->gpr(KJIT_REG_RCX), ret_to);
    uint64_t saved = 0;
    emu->read_u64(emu->gpr(KJIT_REG_RSP) + 8, &saved);
    // An ABI site's rcx is dead: the slot keeps the address in its place.
    EXPECT_EQ(saved, abi_return() ? ret_to : kProgramRcx);
    return emu;
  }
  static constexpr uint64_t kSp = kStackTop - 0x100;
  static constexpr uint64_t kFlags = 0x2 | 0x1 | 0x40 | 0x80;  // CF ZF SF
};

TEST_F(ReturnChainTest, AHitDropsTheSlotAndKeepsRegistersAndFlags) {
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, blk_[0], KJIT_DEPART_COMPLETED, true));
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x80, blk_[1], KJIT_DEPART_COMPLETED, true));
  for (int i = 0; i < 2; i++) {
    std::unique_ptr<sim::Emulator> emu;
    sim::RunResult r = run_return(kText + 0x40 * (i + 1), dest_[i], &emu);
    ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << i << ": " << r.message;
    EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kProgramRcx) << i;
    EXPECT_EQ(emu->gpr(KJIT_REG_RSP), kSp + 8) << i;
    EXPECT_EQ(emu->rflags() & 0xc1, 0xc1u) << i;
  }
  EXPECT_EQ(site_->links, 2u);
}

// A link for a target whose flags are dead still keeps them for the others
// that miss it: one site's chain serves all its targets (the differential
// fuzzer's case: a function returning to a caller that reads its flags
// after another caller that did not).
// The first link is the site's own: no code out of line until the second.
// Out-of-line links compare against the previous link's target (rcx is
// left offset by it): every link of a three-link chain hits its own target,
// and a miss past all three reaches the gate with the return address.
TEST_F(ReturnChainTest, EachOfThreeLinksHitsAndAMissPastThemHasTheAddress) {
  for (int i = 0; i < 3; i++)
    ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40 * (i + 1), blk_[i], KJIT_DEPART_COMPLETED, true));
  for (int i = 0; i < 3; i++) {
    std::unique_ptr<sim::Emulator> emu;
    sim::RunResult r = run_return(kText + 0x40 * (i + 1), dest_[i], &emu);
    ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << i << ": " << r.message;
    EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kProgramRcx) << i;
    EXPECT_EQ(emu->gpr(KJIT_REG_RSP), kSp + 8) << i;
  }
  run_miss_to_gate(kText + 0x100);
}

TEST_F(ReturnChainTest, TheFirstLinkIsInTheSite) {
  uint32_t used = active().code_used;
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, blk_[0], KJIT_DEPART_COMPLETED, true));
  EXPECT_EQ(active().code_used, used);
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x80, blk_[1], KJIT_DEPART_COMPLETED, true));
  EXPECT_GT(active().code_used, used);
  EXPECT_EQ(branch_target(return_site_tail(site_exec_)), active().exec_at(used));  // the second link
}

TEST_F(ReturnChainTest, AMissPastALinkWithFlagsDeadKeepsTheFlags) {
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, blk_[0], KJIT_DEPART_COMPLETED, true));
  std::unique_ptr<sim::Emulator> emu;
  sim::RunResult r = run_return(kText + 0xc0, test::kGateIndirect, &emu);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->rflags() & 0xc1, 0xc1u);
}

TEST_F(ReturnChainTest, ANativeTargetIsReturnedToAndCounted) {
  kjit_engine_departures before;
  kjit_engine_get_departures(&before);
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, nullptr, KJIT_DEPART_COMPLETED, true));
  std::unique_ptr<sim::Emulator> emu;
  sim::RunResult r = run_return(kText + 0x40, kText + 0x40, &emu);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kProgramRcx);
  EXPECT_EQ(emu->gpr(KJIT_REG_RSP), kSp + 8);
  kjit_engine_departures after;
  kjit_engine_get_departures(&after);
  EXPECT_EQ(after.count[KJIT_DEPART_COMPLETED], before.count[KJIT_DEPART_COMPLETED] + 1);
}

TEST_F(ReturnChainTest, AMissSwapsRcxIntoTheSlotForTheGate) {
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, blk_[0], KJIT_DEPART_COMPLETED, true));
  auto emu = run_miss_to_gate(kText + 0xc0);
  uint64_t ret = 0;
  emu->read_u64(emu->gpr(KJIT_REG_RSP), &ret);
  EXPECT_EQ(ret, active().exec_at(site_->miss_stub) + 5);
}

TEST_F(ReturnChainTest, ATargetBeyondAnImmediateIsRefused) {
  uint32_t used = active().code_used;
  EXPECT_FALSE(return_link_append(active(), site_, 0x0000900000000000ull, blk_[0], KJIT_DEPART_COMPLETED, true));
  EXPECT_EQ(active().code_used, used);
  EXPECT_EQ(branch_target(return_site_tail(site_exec_)), active().exec_at(site_->fallback));
}

// Where flags may be live at the target, every path keeps them: the hit to
// a translation, the native return (with its count), and the miss.
TEST_F(ReturnChainTest, WithFlagsLiveEveryPathKeepsThem) {
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, blk_[0], KJIT_DEPART_COMPLETED, false));
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x80, nullptr, KJIT_DEPART_COMPLETED, false));
  EXPECT_EQ(host(active().exec_at(active().code_used - 1))[0], 0xc3);  // the native hit's ret
  kjit_engine_departures before;
  kjit_engine_get_departures(&before);
  const uint64_t to[2] = {dest_[0], kText + 0x80};
  for (int i = 0; i < 2; i++) {
    std::unique_ptr<sim::Emulator> emu;
    sim::RunResult r = run_return(kText + 0x40 * (i + 1), to[i], &emu);
    ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << i << ": " << r.message;
    EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kProgramRcx) << i;
    EXPECT_EQ(emu->gpr(KJIT_REG_RSP), kSp + 8) << i;
    EXPECT_EQ(emu->rflags() & 0xc1, 0xc1u) << i;
  }
  kjit_engine_departures after;
  kjit_engine_get_departures(&after);
  EXPECT_EQ(after.count[KJIT_DEPART_COMPLETED], before.count[KJIT_DEPART_COMPLETED] + 1);
  EXPECT_EQ(run_miss_to_gate(kText + 0xc0)->rflags() & 0xc1, 0xc1u);
}

// The `ret` of a C function (kjit_os_c_abi_return): its callers read
// neither rcx nor the flags, so its links compare the slot with `cmp`.
class AbiReturnChainTest : public ReturnChainTest {
 protected:
  bool abi_return() const override { return true; }
};

TEST_F(AbiReturnChainTest, TheSiteIsACompareOfTheSlot) {
  EXPECT_TRUE(is_abi_return_site(site_exec_));
  EXPECT_NE(host(site_exec_)[0], 0x51);  // no push rcx
}

TEST_F(AbiReturnChainTest, EachOfThreeLinksHitsAndDropsTheSlot) {
  for (int i = 0; i < 3; i++)
    ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40 * (i + 1), blk_[i], KJIT_DEPART_COMPLETED, false));
  for (int i = 0; i < 3; i++) {
    std::unique_ptr<sim::Emulator> emu;
    sim::RunResult r = run_return(kText + 0x40 * (i + 1), dest_[i], &emu);
    ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << i << ": " << r.message;
    EXPECT_EQ(emu->gpr(KJIT_REG_RCX), kProgramRcx) << i;  // a hit leaves rcx alone
    EXPECT_EQ(emu->gpr(KJIT_REG_RSP), kSp + 8) << i;
  }
  run_miss_to_gate(kText + 0x100);
}

// cmp, je, lea rsp, jmp: where the general site takes push, mov, lea,
// jrcxz, pop, lea rsp, jmp.
TEST_F(AbiReturnChainTest, TheSitesOwnLinkHitsInFourInstructions) {
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, blk_[0], KJIT_DEPART_COMPLETED, false));
  std::unique_ptr<sim::Emulator> emu;
  sim::RunResult r = run_return(kText + 0x40, dest_[0], &emu);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(r.insns, 4u);
}

TEST_F(AbiReturnChainTest, ANativeTargetIsReturnedToAndCounted) {
  kjit_engine_departures before;
  kjit_engine_get_departures(&before);
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, nullptr, KJIT_DEPART_COMPLETED, false));
  std::unique_ptr<sim::Emulator> emu;
  sim::RunResult r = run_return(kText + 0x40, kText + 0x40, &emu);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RSP), kSp + 8);
  kjit_engine_departures after;
  kjit_engine_get_departures(&after);
  EXPECT_EQ(after.count[KJIT_DEPART_COMPLETED], before.count[KJIT_DEPART_COMPLETED] + 1);
}

TEST_F(AbiReturnChainTest, AMissHandsTheGateTheAddressInRcx) {
  ASSERT_TRUE(return_link_append(active(), site_, kText + 0x40, blk_[0], KJIT_DEPART_COMPLETED, false));
  auto emu = run_miss_to_gate(kText + 0xc0);
  uint64_t ret = 0;
  emu->read_u64(emu->gpr(KJIT_REG_RSP), &ret);
  EXPECT_EQ(ret, active().exec_at(site_->miss_stub) + 5);
}

}  // namespace
}  // namespace kjit
