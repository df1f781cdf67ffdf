// SPDX-License-Identifier: GPL-2.0
// kjit_insert_context_call in the engine: the requests it refuses, and the
// code it emits, whose pushes lay out struct kjit_mcontext (what the routine
// then reads is tested on the emulated CPU: tests/sim/context_call_test.cc).
#include <cstring>
#include <vector>

#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

void context_routine(const kjit_mcontext *) {}

constexpr int kEINVAL = -22, kEPERM = -1;
std::vector<int> g_answers;

// mov eax, 1; ret: one context call before the mov, and the malformed ones.
void on_block(kjit_block *b, void *) {
  kjit_insn *mov = kjit_block_insn(b, 0), *ret = kjit_block_insn(b, 1);
  g_answers = {
      kjit_insert_context_call(mov, KJIT_IPOINT_BEFORE, context_routine),
      kjit_insert_context_call(ret, KJIT_IPOINT_AFTER, context_routine),    // not after a transfer
      kjit_insert_context_call(mov, KJIT_IPOINT_TAKEN, context_routine),    // no edge
      kjit_insert_context_call(mov, KJIT_IPOINT_BEFORE, nullptr),
      kjit_insert_context_call(nullptr, KJIT_IPOINT_BEFORE, context_routine),
  };
}
kjit_plugin g_plugin = {"context", nullptr, on_block, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

class ContextCallTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    g_answers.clear();
    ASSERT_EQ(kjit_register_plugin(&g_plugin), 0);
  }
  void TearDown() override {
    kjit_unregister_plugin(&g_plugin);
    EngineTest::TearDown();
  }
};

TEST_F(ContextCallTest, MalformedRequestsAreRefused) {
  test_shim_add_code(kText, {0xb8, 0x01, 0, 0, 0, 0xc3});
  ASSERT_NE(kjit_engine_enter(kText), kText);
  EXPECT_EQ(g_answers, (std::vector<int>{0, kEINVAL, kEINVAL, kEINVAL, kEINVAL}));
}

TEST_F(ContextCallTest, ThePushesAreTheContextAndEveryRegisterComesBack) {
  test_shim_add_code(kText, {0xb8, 0x01, 0, 0, 0, 0xc3});
  const kjit_engine_stats before = stats();
  const uint64_t exec = kjit_engine_enter(kText);
  ASSERT_NE(exec, kText);
  EXPECT_EQ(stats().outlined_calls, before.outlined_calls + 1);
  std::vector<uint8_t> want = {
      0x68, 0x00, 0x00, 0x00, 0x81,  // push rip (kText)
      0x9c,                          // pushfq
      0x41, 0x57, 0x41, 0x56, 0x41, 0x55, 0x41, 0x54, 0x41, 0x53, 0x41, 0x52, 0x41, 0x51, 0x41, 0x50,  // r15..r8
      0x57, 0x56, 0x55,              // rdi, rsi, rbp
      0x54,                          // push rsp
      0x48, 0x83, 0x04, 0x24, 0x68,  // add qword [rsp], 104: the program's rsp
      0x53, 0x52, 0x51, 0x50,        // rbx, rdx, rcx, rax
      0x48, 0x89, 0xe7,              // mov rdi, rsp: the context
      0xff, 0x15, 0x02, 0, 0, 0, 0xeb, 0x08,  // call [slot] (the routine is out of rel32 reach)
  };
  uint64_t routine = reinterpret_cast<uint64_t>(context_routine);
  for (int i = 0; i < 8; i++) want.push_back(static_cast<uint8_t>(routine >> (8 * i)));
  const std::vector<uint8_t> restore = {
      0x58, 0x59, 0x5a, 0x5b,                          // rax, rcx, rdx, rbx
      0x48, 0x8d, 0xa4, 0x24, 0x08, 0, 0, 0,           // lea rsp, [rsp + 8]: past rsp
      0x5d, 0x5e, 0x5f,                                // rbp, rsi, rdi
      0x41, 0x58, 0x41, 0x59, 0x41, 0x5a, 0x41, 0x5b, 0x41, 0x5c, 0x41, 0x5d, 0x41, 0x5e, 0x41, 0x5f,
      0x9d,                                            // popfq
      0x48, 0x8d, 0xa4, 0x24, 0x08, 0, 0, 0,           // past rip
      0xb8, 0x01, 0, 0, 0,                             // the copied mov
  };
  want.insert(want.end(), restore.begin(), restore.end());
  const std::vector<uint8_t> got(host(exec), host(exec) + want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_EQ(got[i], want[i]) << "byte " << i;
}

// Inside a swapgs pair, as for every call (gs_window_test.cc).
TEST_F(ContextCallTest, RefusedWhereTheGsBaseIsTheUsers) {
  kjit_unregister_plugin(&g_plugin);
  static int answer;
  answer = 1;
  static const kjit_plugin swapped = {
      "context-gs", nullptr,
      [](kjit_block *b, void *) {
        answer = kjit_insert_context_call(kjit_block_insn(b, 1), KJIT_IPOINT_BEFORE, context_routine);
      },
      nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  ASSERT_EQ(kjit_register_plugin(&swapped), 0);
  // swapgs; mov gs, edi; swapgs; ret
  test_shim_add_code(kText, {0x0f, 0x01, 0xf8, 0x8e, 0xef, 0x0f, 0x01, 0xf8, 0xc3});
  ASSERT_NE(kjit_engine_enter(kText), kText);
  EXPECT_EQ(answer, kEPERM);
  kjit_unregister_plugin(&swapped);
}

}  // namespace
}  // namespace kjit
