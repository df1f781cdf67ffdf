// SPDX-License-Identifier: GPL-2.0
// The indirect-branch lookup: the table the engine fills (insert, lookup,
// probe limit) and the routine translated code runs to probe it (on the
// simulator's CPU: a hit returns into the translation with every register
// and flag restored, a miss returns into the site's miss stub).
#include "core/ibl.h"

#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

using IblTest = test::EngineTest;

TEST_F(IblTest, LookupHitsWhatWasInsertedAndMissesTheRest) {
  Epoch &e = active();
  ASSERT_NE(e.ibl_routine, 0u);
  ibl_insert(e, kText + 0x40, e.exec_at(0x4000));
  ibl_insert(e, kText + 0x80, kText + 0x80);  // native target
  EXPECT_EQ(ibl_lookup(e, kText + 0x40), e.exec_at(0x4000));
  EXPECT_EQ(ibl_lookup(e, kText + 0x80), kText + 0x80);
  EXPECT_EQ(ibl_lookup(e, kText + 0xc0), 0u);
  EXPECT_EQ(ibl_lookup(e, 0), 0u);
}

TEST_F(IblTest, AnEntryKeepsItsSlotAndTakesTheNewestTranslation) {
  // Readers hold no lock: an entry, once published, keeps its pc; its
  // translation is replaced with one store (a retired one's forwarder,
  // then the new translation).
  Epoch &e = active();
  ibl_insert(e, kText + 0x40, e.exec_at(0x4000));
  const uint32_t home = ibl_home(e, kText + 0x40);
  ibl_insert(e, kText + 0x40, e.exec_at(0x5000));
  EXPECT_EQ(ibl_lookup(e, kText + 0x40), e.exec_at(0x5000));
  EXPECT_EQ(ibl_home(e, kText + 0x40), home);
  // A redirect applies only to the translation it names.
  EXPECT_FALSE(ibl_redirect(e, kText + 0x40, e.exec_at(0x4000), e.exec_at(0x6000)));
  EXPECT_EQ(ibl_lookup(e, kText + 0x40), e.exec_at(0x5000));
  EXPECT_TRUE(ibl_redirect(e, kText + 0x40, e.exec_at(0x5000), e.exec_at(0x6000)));
  EXPECT_EQ(ibl_lookup(e, kText + 0x40), e.exec_at(0x6000));
  EXPECT_FALSE(ibl_redirect(e, kText + 0x80, 0, e.exec_at(0x6000)));  // no entry
}

TEST_F(IblTest, CollidingTargetsTakeTheNextSlotsUpToTheProbeLimit) {
  Epoch &e = active();
  // Return addresses 5 bytes apart until kIblProbes + 1 share a home slot.
  std::vector<uint64_t> same;
  const uint32_t home = ibl_home(e, kText);
  for (uint64_t a = kText; same.size() <= kIblProbes && a < kText + (1u << 30); a += 5)
    if (ibl_home(e, a) == home) same.push_back(a);
  ASSERT_EQ(same.size(), kIblProbes + 1);
  auto pc = [&](uint64_t k) { return same[k]; };
  for (uint64_t k = 0; k <= kIblProbes; k++) ibl_insert(e, pc(k), e.exec_at(0x4000 + k * 16));
  for (uint64_t k = 0; k < kIblProbes; k++) EXPECT_EQ(ibl_lookup(e, pc(k)), e.exec_at(0x4000 + k * 16)) << k;
  EXPECT_EQ(ibl_lookup(e, pc(kIblProbes)), 0u);  // no room: left to the dispatcher
  EXPECT_EQ(stats().ibl_full, 1u);
}

// Neighbouring return addresses (the call sites of one function) filling
// a quarter of the table all find a slot.
TEST_F(IblTest, NeighbouringTargetsAllFindASlot) {
  Epoch &e = active();
  const uint64_t n = (e.ibl_mask + 1) / 4;
  for (uint64_t k = 0; k < n; k++) ibl_insert(e, kText + 0x1000 + 5 * k, e.exec_at(0x4000));
  for (uint64_t k = 0; k < n; k++) EXPECT_EQ(ibl_lookup(e, kText + 0x1000 + 5 * k), e.exec_at(0x4000)) << k;
  EXPECT_EQ(stats().ibl_full, 0u);
}

TEST_F(IblTest, ResetEmptiesTheTable) {
  Epoch &e = active();
  ibl_insert(e, kText + 0x40, e.exec_at(0x4000));
  ASSERT_TRUE(e.reset());
  EXPECT_EQ(ibl_lookup(e, kText + 0x40), 0u);
}

TEST_F(IblTest, SmallCacheHasNoIbl) {
  ASSERT_EQ(init(nullptr, 16 * 1024), 0);  // two 8 KiB halves
  Epoch &e = active();
  EXPECT_EQ(e.ibl_routine, 0u);
  ibl_insert(e, kText + 0x40, e.exec_at(0x1000));
  EXPECT_EQ(ibl_lookup(e, kText + 0x40), 0u);
}

constexpr uint64_t kProgramRcx = 0x1111222233334444ull;
constexpr uint64_t kRax = 0xaaaa, kRdx = 0xdddd;

// Runs the routine with the chain protocol's state: rcx = target,
// [rsp] = the miss stub, [rsp+8] = the program's rcx.
struct RoutineRun {
  sim::RunResult r;
  std::unique_ptr<sim::Emulator> emu;
  uint64_t sp;
};
RoutineRun run_routine(std::unique_ptr<sim::Emulator> emu, uint64_t target,
                       uint64_t miss_stub, uint64_t expect_at) {
  const Epoch &e = g_engine.epoch();
  uint64_t sp = test::EngineTest::kStackTop - 0x100;
  emu->write(sp, &miss_stub, 8);
  emu->write(sp + 8, &kProgramRcx, 8);
  emu->set_gpr(KJIT_REG_RSP, sp);
  emu->set_gpr(KJIT_REG_RCX, target);
  emu->set_gpr(KJIT_REG_RAX, kRax);
  emu->set_gpr(KJIT_REG_RDX, kRdx);
  emu->set_rflags(0x2 | 0x1 | 0x80 | 0x800);  // CF SF OF
  RoutineRun run;
  run.r = emu->run(e.exec_at(e.ibl_routine), expect_at, 200);
  run.emu = std::move(emu);
  run.sp = sp;
  return run;
}

TEST_F(IblTest, RoutineHitReturnsIntoTheTranslation) {
  Epoch &e = active();
  uint64_t dest = e.exec_at(0x4000), miss = e.exec_at(0x4100);
  ibl_insert(e, kText + 0x40, dest);
  RoutineRun run = run_routine(emulator(), kText + 0x40, miss, dest);
  ASSERT_EQ(run.r.reason, sim::StopReason::kSentinel) << run.r.message;
  EXPECT_EQ(run.emu->gpr(KJIT_REG_RCX), kProgramRcx);
  EXPECT_EQ(run.emu->gpr(KJIT_REG_RSP), run.sp + 16);  // both protocol slots dropped
  EXPECT_EQ(run.emu->gpr(KJIT_REG_RAX), kRax);
  EXPECT_EQ(run.emu->gpr(KJIT_REG_RDX), kRdx);
  EXPECT_EQ(run.emu->rflags() & 0x8d5, 0x881u);
}

TEST_F(IblTest, RoutineMissReturnsIntoTheMissStub) {
  Epoch &e = active();
  uint64_t miss = e.exec_at(0x4100);
  ibl_insert(e, kText + 0x40, e.exec_at(0x4000));
  RoutineRun run = run_routine(emulator(), kText + 0x80, miss, miss);
  ASSERT_EQ(run.r.reason, sim::StopReason::kSentinel) << run.r.message;
  EXPECT_EQ(run.emu->gpr(KJIT_REG_RCX), kText + 0x80);  // the target, for the gate
  EXPECT_EQ(run.emu->gpr(KJIT_REG_RSP), run.sp + 8);
  uint64_t saved = 0;
  run.emu->read_u64(run.sp + 8, &saved);
  EXPECT_EQ(saved, kProgramRcx);
  EXPECT_EQ(run.emu->gpr(KJIT_REG_RAX), kRax);
  EXPECT_EQ(run.emu->gpr(KJIT_REG_RDX), kRdx);
  EXPECT_EQ(run.emu->rflags() & 0x8d5, 0x881u);
}

}  // namespace
}  // namespace kjit
