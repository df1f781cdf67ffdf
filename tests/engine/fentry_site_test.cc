// SPDX-License-Identifier: GPL-2.0
// fentry sites (include/kjit/os_shim.h kjit_os_fentry_site): a translation
// never copies a site's bytes, it tests the live first byte each time it
// passes, so a tool switching tracing on or off at the site changes what
// the same translation does, with nothing retired or built again.
#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

// Another tool's trampoline (outside text): a call to it leaves the cache
// at the call, natively.
constexpr uint64_t kTrampoline = 0xffffffffa0001000ull;
constexpr uint64_t kFn = kText + 0x300;
constexpr uint8_t kNop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};

class FentrySiteTest : public test::EngineTest {
 protected:
  // kFn: SITE ; BODY... ; call kTrampoline (leaves the cache at its address)
  // `site` is the site's bytes; kFn is registered as an fentry site.
  void put(const uint8_t site[5], const std::vector<uint8_t> &body) {
    text_.assign(0x400, 0xcc);
    memcpy(&text_[0x300], site, 5);
    memcpy(&text_[0x305], body.data(), body.size());
    call_at_ = 0x305 + static_cast<uint32_t>(body.size());
    text_[call_at_] = 0xe8;
    int32_t rel = static_cast<int32_t>(kTrampoline - (kText + call_at_ + 5));
    memcpy(&text_[call_at_ + 1], &rel, 4);
    test_shim_add_code(kText, text_);
    test_shim_add_foreign(kTrampoline, kTrampoline + 0x1000);
    test_shim_add_fentry_site(kFn);
  }
  // The text the emulated CPU reads: `first` at the site's first byte (a
  // tool switching the site on writes a call, 0xe8; the int3 of a patch in
  // flight is 0xcc).
  std::unique_ptr<sim::Emulator> cpu(uint8_t first, uint64_t rflags = 0x2) {
    live_ = text_;
    live_[0x300] = first;
    auto emu = emulator_with_data();
    map_text(*emu);
    emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
    emu->set_gpr(KJIT_REG_RAX, 0);
    emu->set_rflags(rflags);
    return emu;
  }
  void map_text(sim::Emulator &emu) {
    EXPECT_EQ(emu.map(kText, 0x1000, sim::kPermR), "");
    EXPECT_TRUE(emu.write(kText, live_.data(), live_.size()));
  }
  // Runs from `exec` until pc reaches `stop`, serving the direct gate as
  // the host does (the successors of a block are built on the way).
  static sim::RunResult run_through(sim::Emulator &emu, uint64_t exec, uint64_t stop) {
    sim::RunResult r;
    for (int exits = 0; exits < 8; exits++) {
      r = emu.run(exec, stop, 200);
      if (r.pc != test::kGateDirect) return r;  // the gate page is int3s: a fault there
      uint64_t stub_return = 0, rsp = emu.gpr(KJIT_REG_RSP);
      EXPECT_TRUE(emu.read_u64(rsp, &stub_return));
      emu.set_gpr(KJIT_REG_RSP, rsp + 8);
      exec = kjit_engine_direct_exit(stub_return);
    }
    return r;
  }
  static uint64_t hooked() {
    kjit_engine_departures d;
    kjit_engine_get_departures(&d);
    return d.count[KJIT_DEPART_HOOKED];
  }
  // The count of the departure site (kFn, hooked); -1 when there is none.
  static int64_t hooked_site_count() {
    kjit_departure_site sites[64];
    uint32_t n = kjit_engine_departure_sites(sites, 64);
    for (uint32_t i = 0; i < n && i < 64; i++)
      if (sites[i].target == kFn && sites[i].why == KJIT_DEPART_HOOKED) return static_cast<int64_t>(sites[i].count);
    return -1;
  }
  std::vector<uint8_t> text_, live_;
  uint32_t call_at_ = 0;
};

TEST_F(FentrySiteTest, ADisabledSiteIsTestedLiveAndSwitchingItRebuildsNothing) {
  put(kNop5, {0xb8, 0x07, 0, 0, 0});  // mov eax, 7
  const uint64_t exec = kjit_engine_enter(kFn);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  const uint64_t built = stats().blocks_built;

  auto off = cpu(0x0f);  // still a NOP: the body runs translated
  sim::RunResult r = off->run(exec, kText + call_at_, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(off->gpr(KJIT_REG_RAX), 7u);
  EXPECT_EQ(hooked(), 1u);  // the trampoline call at the end
  EXPECT_EQ(hooked_site_count(), -1) << "a check that never fired holds no departure site";

  uint64_t through_dispatcher = stats().dispatcher_exits;
  for (uint8_t first : {uint8_t{0xe8}, uint8_t{0xcc}}) {  // switched on; a patch in flight
    auto on = cpu(first);
    r = run_through(*on, exec, kFn);  // natively from the site itself
    ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << std::hex << int(first) << ": " << r.message;
    EXPECT_EQ(on->gpr(KJIT_REG_RAX), 0u) << "the body ran before the site";
    EXPECT_EQ(on->gpr(KJIT_REG_RSP), kStackTop - 0x100) << "the site must see the entry's stack";
  }
  EXPECT_EQ(hooked(), 3u);
  EXPECT_EQ(hooked_site_count(), 2) << "counted at the site, from its first departure";
  EXPECT_EQ(stats().dispatcher_exits, through_dispatcher + 1)
      << "the first departure links the check to a trampoline that counts";
  EXPECT_EQ(kjit_engine_enter(kFn), exec);
  EXPECT_EQ(stats().blocks_built, built) << "the same translation serves both states";
}

TEST_F(FentrySiteTest, ASiteOnWhenTranslatedIsTranslatedAsANopToo) {
  // ftrace_caller stands for the call an enabled site holds.
  uint8_t call[5] = {0xe8, 0, 0, 0, 0};
  int32_t rel = static_cast<int32_t>(kTrampoline - (kFn + 5));
  memcpy(&call[1], &rel, 4);
  put(call, {0xb8, 0x07, 0, 0, 0});
  const uint64_t exec = kjit_engine_enter(kFn);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec)) << "the site no longer ends the entry before it starts";
  auto on = cpu(0xe8);
  sim::RunResult r = run_through(*on, exec, kFn);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  auto off = cpu(0x0f);  // the tool went away: the same copy runs the body
  r = off->run(exec, kText + call_at_, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(off->gpr(KJIT_REG_RAX), 7u);
}

TEST_F(FentrySiteTest, FlagsLiveAtTheSiteSurviveItsTest) {
  // SITE ; jz +5 ; mov eax, 1 ; (jz lands here) call kTrampoline -- with
  // eax 0 on entry, eax says whether ZF reached the jz as it entered.
  put(kNop5, {0x74, 0x05, 0xb8, 0x01, 0, 0, 0});
  const uint64_t exec = kjit_engine_enter(kFn);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  auto zf_clear = cpu(0x0f, 0x2);  // cmpb $0x0f of a NOP byte would set ZF
  sim::RunResult r = run_through(*zf_clear, exec, kText + call_at_);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(r.pc, kText + call_at_);
  EXPECT_EQ(zf_clear->gpr(KJIT_REG_RAX), 1u) << "the site's test clobbered ZF";
  auto zf_set = cpu(0x0f, 0x2 | 0x40);
  r = run_through(*zf_set, exec, kText + call_at_);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(zf_set->gpr(KJIT_REG_RAX), 0u);
}

TEST_F(FentrySiteTest, OnlyABlocksFirstInstructionOrTheOneAfterAnEndbrIsASite) {
  // endbr64 ; SITE ; mov eax, 7 ; call kTrampoline, the site at kFn + 4
  text_.assign(0x400, 0xcc);
  const uint8_t code[] = {0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0, 0, 0, 0, 0xb8, 0x07, 0, 0, 0, 0xe8, 0, 0, 0, 0};
  memcpy(&text_[0x300], code, sizeof(code));
  int32_t rel = static_cast<int32_t>(kTrampoline - (kFn + 9));
  memcpy(&text_[0x305], &rel, 4);
  rel = static_cast<int32_t>(kTrampoline - (kFn + 19));
  memcpy(&text_[0x30f], &rel, 4);
  test_shim_add_code(kText, text_);
  test_shim_add_foreign(kTrampoline, kTrampoline + 0x1000);
  test_shim_add_fentry_site(kFn + 4);
  call_at_ = 0x30e;
  const uint64_t exec = kjit_engine_enter(kFn);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  live_ = text_;
  live_[0x304] = 0x0f;  // switched off after the build
  auto emu = emulator_with_data();
  map_text(*emu);
  emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
  sim::RunResult r = emu->run(exec, kText + call_at_, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RAX), 7u);
}

}  // namespace
}  // namespace kjit
