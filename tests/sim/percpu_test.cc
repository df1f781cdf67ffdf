// SPDX-License-Identifier: GPL-2.0
// Per-CPU plugin data (kjit_alloc_percpu) with the real engine on the
// emulated CPU: each simulated CPU runs with its own gs base, the icount
// plugin's gs-relative add lands in that CPU's copy, and the sum over the
// copies is exact.
#include <gtest/gtest.h>

#include "core/engine_state.h"
#include "core/epoch.h"
#include "kjit/engine.h"
#include "kjit/plugin.h"
#include "kjit_examples.h"
#include "test_code.h"
#include "translated_runner.h"

namespace kjit::sim {
namespace {

using namespace test;

// loop_code() executes xor, mov, 5 x (add, dec, jnz), call, add, ret,
// lock cmpxchg, ret: 22 instructions per entry.
constexpr uint64_t kLoopInsns = 22;

struct Config {
  const char *name;
  bool inline_calls;
  int64_t percpu_offset;
};

class PercpuTest : public ::testing::TestWithParam<Config> {
 protected:
  TranslatedOptions options() const {
    TranslatedOptions o;
    o.quiet = true;
    o.cpus = 2;
    o.engine.inline_instrumentation = GetParam().inline_calls;
    o.percpu_offset = GetParam().percpu_offset;
    o.plugin = kjit_example_icount();
    o.plugin_init = [] { return kjit_icount_init(); };
    return o;
  }
  static uint64_t copy_value(TranslatedRunner &r, uint32_t cpu) {
    uint64_t v = ~0ull;
    // icount's counter is the first per-CPU allocation: offset 0.
    EXPECT_TRUE(r.emulator().read_u64(r.percpu_copy_of(cpu), &v));
    return v;
  }
};

TEST_P(PercpuTest, EachCpuCountsInItsOwnCopyAndTheSumIsExact) {
  const Capture cap = make_capture(loop_code());
  TranslatedRunner runner(cap, options());
  const uint32_t order[] = {0, 1, 1, 0, 1};  // 2 entries on CPU 0, 3 on CPU 1
  for (uint32_t cpu : order) {
    const TranslatedResult res = runner.run(cpu);
    ASSERT_EQ(res.error, "");
    ASSERT_EQ(res.run.reason, StopReason::kSentinel) << res.run.message;
  }
  EXPECT_EQ(copy_value(runner, 0), 2 * kLoopInsns);
  EXPECT_EQ(copy_value(runner, 1), 3 * kLoopInsns);
  EXPECT_EQ(kjit_icount_result(), 5 * kLoopInsns);
  EXPECT_EQ(kjit_percpu_ncpus(), 2u);
}

// Every entry returns to the sentinel, a stop address: the first return
// reaches the dispatcher, which counts it and links the return site, whose
// link counts the others in this CPU's own cell where the window is
// disp32-addressable (else in the shared one, with a locked add).
TEST_P(PercpuTest, CompletionsAreCountedInTheCpusOwnCell) {
  const Capture cap = make_capture(loop_code());
  TranslatedRunner runner(cap, options());
  const uint32_t order[] = {0, 1, 1, 0, 1};
  for (uint32_t cpu : order) {
    const TranslatedResult res = runner.run(cpu);
    ASSERT_EQ(res.error, "");
    ASSERT_EQ(res.run.reason, StopReason::kSentinel) << res.run.message;
  }
  kjit_engine_departures d;
  kjit_engine_get_departures(&d);
  EXPECT_EQ(d.count[KJIT_DEPART_COMPLETED], 5u);
  kjit_departure_site sites[4];
  ASSERT_EQ(kjit_engine_departure_sites(sites, 4), 1u);
  EXPECT_EQ(sites[0].count, 5u);
  if (GetParam().percpu_offset == kAutoPercpuOffset) {
    ASSERT_EQ(g_engine.ncompletion_cells, 1u);
    uint64_t *cell = &g_engine.completion_cells[0];
    EXPECT_EQ(*static_cast<uint64_t *>(kjit_percpu_copy(cell, 0)), 1u);  // the second entry on CPU 0
    EXPECT_EQ(*static_cast<uint64_t *>(kjit_percpu_copy(cell, 1)), 3u);
  }
  kjit_engine_reset_departures();
  kjit_engine_get_departures(&d);
  EXPECT_EQ(d.count[KJIT_DEPART_COMPLETED], 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, PercpuTest,
    ::testing::Values(Config{"inlined_disp32", true, kAutoPercpuOffset},
                      // A __percpu pointer beyond a disp32 (a later pcpu chunk):
                      // the address goes through a register.
                      Config{"inlined_via_register", true, 1ll << 40},
                      // Called, not inlined: the routine gets this CPU's copy.
                      Config{"called", false, kAutoPercpuOffset}),
    [](const ::testing::TestParamInfo<Config> &i) { return std::string(i.param.name); });

// A called routine gets this CPU's copy computed before the call: the task
// must not migrate in between, so the address is formed and the routine
// called with interrupts off (pushfq; cli ... popfq), and the run still
// counts exactly.
TEST(PercpuCalled, TheCpuIsPinnedFromTheAddressToTheRoutinesReturn) {
  const Capture cap = make_capture(loop_code());
  TranslatedOptions o;
  o.quiet = true;
  o.cpus = 2;
  o.engine.inline_instrumentation = 0;
  o.plugin = kjit_example_icount();
  o.plugin_init = [] { return kjit_icount_init(); };
  TranslatedRunner runner(cap, o);
  const TranslatedResult res = runner.run(1);
  ASSERT_EQ(res.error, "");
  ASSERT_EQ(res.run.reason, StopReason::kSentinel) << res.run.message;
  EXPECT_EQ(kjit_icount_result(), kLoopInsns);
  const Epoch &e = g_engine.epoch();
  const uint8_t *code = e.write_at(0);
  uint32_t pinned = 0;
  for (uint32_t at = 16; at + 9 < e.code_used; at++) {
    // add reg, gs:[disp32]: 65 48|4c 03 modrm(mod 00, rm 100) 25
    if (code[at] != 0x65 || (code[at + 1] & 0xfb) != 0x48 || code[at + 2] != 0x03 || (code[at + 3] & 0xc7) != 0x04 ||
        code[at + 4] != 0x25)
      continue;
    bool cli_before = false, popf_after = false;
    for (uint32_t back = 2; back <= 16 && !cli_before; back++)
      cli_before = code[at - back] == 0x9c && code[at - back + 1] == 0xfa;
    for (uint32_t fwd = 9; fwd < 40 && at + fwd < e.code_used && !popf_after; fwd++) popf_after = code[at + fwd] == 0x9d;
    EXPECT_TRUE(cli_before) << "gs-relative address at cache+" << at << " formed with interrupts on";
    EXPECT_TRUE(popf_after) << "no popfq after the call at cache+" << at;
    pinned++;
  }
  EXPECT_GT(pinned, 0u);
}

// The readers: sum and per-CPU copies of an allocation, and the fallback
// for a pointer that is not per-CPU.
TEST(PercpuApi, SumCopiesAndSharedFallback) {
  const Capture cap = make_capture(loop_code());
  TranslatedOptions o;
  o.quiet = true;
  o.cpus = 3;
  o.plugin_init = [] { return 0; };
  TranslatedRunner runner(cap, o);
  ASSERT_EQ(runner.run(0).error, "");
  auto *p = static_cast<uint64_t *>(kjit_alloc_percpu(16));
  ASSERT_NE(p, nullptr);
  for (uint32_t cpu = 0; cpu < 3; cpu++) {
    auto *c = static_cast<uint64_t *>(kjit_percpu_copy(p + 1, cpu));
    ASSERT_NE(c, nullptr);
    *c = 10 * (cpu + 1);
  }
  EXPECT_EQ(kjit_percpu_sum_u64(p + 1), 60u);
  EXPECT_EQ(kjit_percpu_sum_u64(p), 0u);
  EXPECT_EQ(kjit_percpu_copy(p, 3), nullptr);
  auto *shared = static_cast<uint64_t *>(kjit_alloc(8));
  ASSERT_NE(shared, nullptr);
  *shared = 5;
  EXPECT_EQ(kjit_percpu_sum_u64(shared), 5u);
  EXPECT_EQ(kjit_percpu_copy(shared, 0), nullptr);
  EXPECT_EQ(kjit_percpu_sum_u64(nullptr), 0u);
  // The window is bounded: an allocation beyond it is refused.
  EXPECT_EQ(kjit_alloc_percpu(o.percpu_size + 1), nullptr);
}

TEST(PercpuApi, NoWindowMeansNoAllocation) {
  const Capture cap = make_capture(loop_code());
  TranslatedOptions o;
  o.quiet = true;
  o.percpu_size = 0;
  TranslatedRunner runner(cap, o);
  ASSERT_EQ(runner.run(0).error, "");
  EXPECT_EQ(kjit_alloc_percpu(8), nullptr);
  EXPECT_EQ(kjit_percpu_ncpus(), 0u);
}

}  // namespace
}  // namespace kjit::sim
