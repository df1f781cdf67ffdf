// SPDX-License-Identifier: GPL-2.0
// Inside a swapgs pair (load_gs_index: `swapgs; mov gs, edi; swapgs`) the
// GS base is the task's user one, and every routine, like the page-fault
// handler, reaches per-CPU data through GS: the engine refuses calls there
// (kjit_insn_gs_swapped, -EPERM) and places no block-level call there.
#include <map>
#include <utility>

#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

void noop_routine() {}

// Per instruction pc: what inserting before and after it returned, and
// what kjit_insn_gs_swapped said there.
struct Seen {
  int before = 1, after = 1, swapped_before = -1, swapped_after = -1;
};
std::map<uint64_t, Seen> g_seen;

void try_everywhere(kjit_block *b, void *) {
  for (uint32_t i = 0; i < kjit_block_insn_count(b); i++) {
    kjit_insn *in = kjit_block_insn(b, i);
    Seen &s = g_seen[kjit_insn_pc(in)];
    s.swapped_before = kjit_insn_gs_swapped(in, KJIT_IPOINT_BEFORE);
    s.swapped_after = kjit_insn_gs_swapped(in, KJIT_IPOINT_AFTER);
    s.before = kjit_insert_call(in, KJIT_IPOINT_BEFORE, reinterpret_cast<void *>(noop_routine), 0);
    if (!kjit_insn_is_branch(in))
      s.after = kjit_insert_call(in, KJIT_IPOINT_AFTER, reinterpret_cast<void *>(noop_routine), 0);
  }
}

kjit_plugin g_plugin = {"gs-window", nullptr, try_everywhere, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

class GsWindow : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    g_seen.clear();
    // swapgs; mov gs, edi; nop; swapgs; mov eax, 1; ret
    test_shim_add_code(kText, {0x0f, 0x01, 0xf8, 0x8e, 0xef, 0x90, 0x0f, 0x01, 0xf8, 0xb8, 0x01, 0, 0, 0, 0xc3});
    ASSERT_EQ(kjit_register_plugin(&g_plugin), 0);
  }
  void TearDown() override {
    kjit_unregister_plugin(&g_plugin);
    EngineTest::TearDown();
  }
};

TEST_F(GsWindow, CallsAreRefusedBetweenTheSwapgsPair) {
  ASSERT_NE(kjit_engine_enter(kText), kText);  // translated
  constexpr int kEPERM = -1;
  const std::pair<uint64_t, Seen> want[] = {
      {kText + 0, {0, kEPERM, 0, 1}},        // swapgs (opens)
      {kText + 3, {kEPERM, kEPERM, 1, 1}},   // mov gs, edi
      {kText + 5, {kEPERM, kEPERM, 1, 1}},   // nop
      {kText + 6, {kEPERM, 0, 1, 0}},        // swapgs (closes)
      {kText + 9, {0, 0, 0, 0}},             // mov eax, 1
  };
  for (const auto &[pc, w] : want) {
    SCOPED_TRACE(pc - kText);
    ASSERT_TRUE(g_seen.count(pc));
    const Seen &s = g_seen[pc];
    EXPECT_EQ(s.before, w.before);
    EXPECT_EQ(s.after, w.after);
    EXPECT_EQ(s.swapped_before, w.swapped_before);
    EXPECT_EQ(s.swapped_after, w.swapped_after);
  }
}

}  // namespace
}  // namespace kjit
