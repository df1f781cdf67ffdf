// SPDX-License-Identifier: GPL-2.0
// kjit_insert_call_if and KJIT_ARG_PERCPU with the real engine on the
// emulated CPU: a guarded call runs only on the CPU whose guard byte is
// set, the flags the program reads after the guard are its own, and a
// per-CPU address of the host's (gs-relative) reaches the running CPU's
// copy, inlined or called.
#include <gtest/gtest.h>

#include "core/engine_state.h"
#include "kjit/engine.h"
#include "kjit/plugin.h"
#include "test_code.h"
#include "translated_runner.h"

extern "C" {
void guarded_test_inc(uint64_t *counter);
struct guarded_test_cover {
  uint64_t *area;
  uint64_t size;
};
void guarded_test_append(struct guarded_test_cover *c, uint64_t pc);
}

namespace kjit::sim {
namespace {

using namespace test;

// Per-CPU window layout: [0] guard byte, [8] guarded count, [16] count of
// the same points unguarded, [64] the cover {area, size}.
struct Cells {
  uint8_t *guard = nullptr;
  uint64_t *guarded = nullptr, *always = nullptr;
  guarded_test_cover *cover = nullptr;
} g_cells;
// The append reads a pointer the test stores in guest memory: only inlined
// code can follow it (a called routine runs on the host, which sees the
// windows only).
bool g_append;

uint64_t gs_address_of(const void *p) {
  const kjit_os_memory &m = g_engine.mem;
  return m.percpu_offset + (reinterpret_cast<uint64_t>(p) - reinterpret_cast<uint64_t>(m.percpu_host_views[0]));
}

// Before every jnz (flags live: it reads ZF): the guarded count and the
// unguarded one (through a gs-relative address of the host's own kind); at
// every block start, the KCOV append through such an address.
void on_insn(kjit_insn *in, void *) {
  if (!kjit_insn_is_conditional(in)) return;
  ASSERT_EQ(kjit_insert_call_if(in, KJIT_IPOINT_BEFORE, KJIT_ARG_PTR(g_cells.guard), (void *)guarded_test_inc, 1,
                                KJIT_ARG_PTR(g_cells.guarded)),
            0);
  ASSERT_EQ(kjit_insert_call(in, KJIT_IPOINT_BEFORE, (void *)guarded_test_inc, 1,
                             KJIT_ARG_PERCPU(gs_address_of(g_cells.always))),
            0);
}
void on_block(kjit_block *b, void *) {
  if (!g_append) return;
  ASSERT_EQ(kjit_insert_call(kjit_block_insn(b, 0), KJIT_IPOINT_BEFORE, (void *)guarded_test_append, 2,
                             KJIT_ARG_PERCPU(gs_address_of(g_cells.cover)), KJIT_ARG_CONST(kjit_block_pc(b))),
            0);
}
const kjit_plugin kGuardedPlugin = {"guarded", nullptr, on_block, nullptr, on_insn, nullptr, nullptr, nullptr, nullptr};

int init_cells() {
  auto *base = static_cast<uint8_t *>(kjit_alloc_percpu(128));
  if (!base) return -1;
  g_cells.guard = base;
  g_cells.guarded = reinterpret_cast<uint64_t *>(base + 8);
  g_cells.always = reinterpret_cast<uint64_t *>(base + 16);
  g_cells.cover = reinterpret_cast<guarded_test_cover *>(base + 64);
  return 0;
}

class GuardedCallTest : public ::testing::TestWithParam<bool> {};

TEST_P(GuardedCallTest, RunsOnlyWhereTheGuardIsSetAndKeepsTheFlags) {
  const Capture cap = make_capture(loop_code());
  TranslatedOptions o;
  o.quiet = true;
  o.cpus = 2;
  o.engine.inline_instrumentation = GetParam();
  g_append = GetParam();
  o.plugin = &kGuardedPlugin;
  o.plugin_init = init_cells;
  TranslatedRunner runner(cap, o);
  // The guard and the cover of CPU 1 only: CPU 0's cover area is NULL.
  const TranslatedResult first = runner.run(0);  // builds and registers
  ASSERT_EQ(first.error, "");
  ASSERT_EQ(first.run.reason, StopReason::kSentinel) << first.run.message;
  // rcx counted down to 0 with five jnz: every jnz saw its own ZF
  // through the guard's compare (a clobbered ZF ends the loop early).
  EXPECT_EQ(first.final_regs.gpr[KJIT_REG_RCX], 0u);
  auto cpu_u64 = [&](const void *p, uint32_t cpu) {
    uint64_t v = ~0ull;
    EXPECT_TRUE(runner.emulator().read_u64(runner.percpu_copy_of(cpu) + gs_address_of(p) - g_engine.mem.percpu_offset, &v));
    return v;
  };
  EXPECT_EQ(cpu_u64(g_cells.always, 0), 5u);  // one jnz, five times
  EXPECT_EQ(cpu_u64(g_cells.guarded, 0), 0u);
  // CPU 1: guard set, a 16-word cover area in the data page.
  const uint64_t one = 1, area = kData + 0x800, words = 16;
  const uint64_t c1 = runner.percpu_copy_of(1);
  ASSERT_TRUE(runner.emulator().write(c1, &one, 1));
  ASSERT_TRUE(runner.emulator().write(c1 + 64, &area, 8));
  ASSERT_TRUE(runner.emulator().write(c1 + 72, &words, 8));
  const TranslatedResult second = runner.run(1);
  ASSERT_EQ(second.error, "");
  ASSERT_EQ(second.run.reason, StopReason::kSentinel) << second.run.message;
  EXPECT_EQ(second.final_regs.gpr[KJIT_REG_RCX], 0u);
  EXPECT_EQ(cpu_u64(g_cells.always, 1), 5u);
  EXPECT_EQ(cpu_u64(g_cells.guarded, 1), 5u);
  EXPECT_EQ(cpu_u64(g_cells.guarded, 0), 0u);
  if (!g_append) return;
  // The cover: one PC per dynamic block, in order, count first.
  uint64_t count = 0, pcs[16] = {};
  ASSERT_TRUE(runner.emulator().read_u64(area, &count));
  ASSERT_GE(count, 6u);  // the loop's first block, its body 5 times, the call...
  ASSERT_LT(count, words);
  for (uint64_t i = 0; i < count; i++) ASSERT_TRUE(runner.emulator().read_u64(area + 8 * (i + 1), &pcs[i]));
  EXPECT_EQ(pcs[0], kCode);
  uint64_t loop_heads = 0;
  for (uint64_t i = 0; i < count; i++) loop_heads += pcs[i] == kCode + 7;
  EXPECT_EQ(loop_heads, 4u);  // rounds 2-5 start a block at the loop head
  if (GetParam()) {
    EXPECT_GT(second.stats.inlined_calls + first.stats.inlined_calls, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GuardedCallTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &i) { return i.param ? "inlined" : "called"; });

TEST(GuardedCallApi, RejectsGuardsThatNameNoMemory) {
  const Capture cap = make_capture(loop_code());
  TranslatedOptions o;
  o.quiet = true;
  static int rejected = 0;
  static const kjit_plugin bad = {
      "bad", nullptr,
      [](kjit_block *b, void *) {
        rejected += kjit_insert_call_if(kjit_block_insn(b, 0), KJIT_IPOINT_BEFORE, KJIT_ARG_CONST(1),
                                        (void *)guarded_test_inc, 0) < 0;
        rejected += kjit_insert_call_if(kjit_block_insn(b, 0), KJIT_IPOINT_BEFORE, KJIT_ARG_REG(KJIT_REG_RAX),
                                        (void *)guarded_test_inc, 0) < 0;
      },
      nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  o.plugin = &bad;
  o.plugin_init = [] { return 0; };
  TranslatedRunner runner(cap, o);
  const TranslatedResult r = runner.run(0);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.final_regs.gpr[KJIT_REG_RCX], 0u);
  EXPECT_GT(rejected, 0);
  EXPECT_EQ(rejected % 2, 0);
}

}  // namespace
}  // namespace kjit::sim
