// SPDX-License-Identifier: GPL-2.0
// kjit_insert_context_call with the real engine on the emulated CPU: before
// every instruction the routine sees the registers the original code has
// there (each GPR, rsp as the program has it, rflags, rip), against a run
// of the original code; after an instruction and on a branch's edges it
// sees the state the next instruction starts with; the program's registers
// after the run are the original run's; a six-argument call at the same
// point reads the same values; a routine that writes its context fails the
// run.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kjit/plugin.h"
#include "reference_runner.h"
#include "test_code.h"
#include "translated_runner.h"

namespace kjit::sim {
namespace {

using namespace test;

// Every GPR is read or written, rsp moves, the flags change, a conditional
// branch falls through and one is taken, a call and two returns.
std::vector<uint8_t> context_code() {
  std::vector<uint8_t> c = {
      0x53,                    // 400000 push rbx
      0x48, 0x01, 0xc8,        // 400001 add rax, rcx
      0x4d, 0x87, 0xc1,        // 400004 xchg r9, r8
      0x4f, 0x8d, 0x14, 0x23,  // 400007 lea r10, [r11+r12]
      0xf9,                    // 40000b stc
      0x4d, 0x29, 0xf5,        // 40000c sub r13, r14
      0x5b,                    // 40000f pop rbx
      0x74, 0x02,              // 400010 jz 400014 (not taken)
      0x75, 0x03,              // 400012 jnz 400017 (taken)
      0x48, 0x31, 0xc0,        // 400014 xor rax, rax
      0xe8, 0x04, 0, 0, 0,     // 400017 call 400020
      0x48, 0xff, 0xc7,        // 40001c inc rdi
      0xc3,                    // 40001f ret
      0x49, 0xff, 0xc7,        // 400020 inc r15
      0x9c,                    // 400023 pushfq
      0x5e,                    // 400024 pop rsi
      0x48, 0x31, 0xd2,        // 400025 xor rdx, rdx
      0xc3,                    // 400028 ret
  };
  return c;
}

Capture context_capture() {
  CaptureBuilder b;
  b.add_region(kCode, context_code(), kPermR | kPermX).add_stack(kStackTop, 0x10000).set_entry(kCode);
  for (int r = 0; r < 16; r++)
    if (r != KJIT_REG_RSP) b.set_gpr(r, 0x1111111111111111ull * static_cast<uint64_t>(r + 1) + 0x0f0f);
  b.set_rflags(0x202 | 0x80);  // IF, SF
  Capture cap;
  EXPECT_EQ(b.build(&cap), "");
  return cap;
}

struct State {
  uint64_t gpr[16];
  uint64_t rflags, rip;
};
State state_of(const kjit_mcontext &mc) {
  State s;
  memcpy(s.gpr, mc.gpr, sizeof s.gpr);
  s.rflags = mc.rflags;
  s.rip = mc.rip;
  return s;
}

void expect_same(const State &want, const State &got, const char *what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.rip, want.rip);
  EXPECT_EQ(got.rflags, want.rflags) << std::hex << "at 0x" << want.rip;
  for (int r = 0; r < 16; r++) EXPECT_EQ(got.gpr[r], want.gpr[r]) << "register " << r << std::hex << " at 0x" << want.rip;
}

// The original code, one state per instruction it executes.
std::vector<State> original_states(const Capture &cap) {
  Emulator emu;
  std::vector<State> out;
  EXPECT_EQ(emu.load_capture(cap), "");
  EXPECT_EQ(emu.map_sentinel(cap.sentinel), "");
  EXPECT_EQ(emu.map_stack(cap.regs.gpr[KJIT_REG_RSP], 0x10000), "");
  EXPECT_TRUE(emu.push(cap.sentinel));
  emu.add_code_hook(kCode, kCode + 0xfff, [&](Emulator &e, uint64_t pc, uint32_t) {
    State s;
    for (int r = 0; r < 16; r++) s.gpr[r] = e.gpr(r);
    s.rflags = e.rflags();
    s.rip = pc;
    out.push_back(s);
  });
  const RunResult run = emu.run(cap.entry_pc, cap.sentinel, 1000);
  EXPECT_EQ(run.reason, StopReason::kSentinel) << run.message;
  return out;
}

// What the routines saw, in the order they ran.
enum class Point { kBefore, kAfter, kEdge };
struct Seen {
  Point point;
  State state;
};
std::vector<Seen> g_seen;
std::vector<std::vector<uint64_t>> g_six;  // the six-argument call's values
bool g_six_args;

void before_routine(const kjit_mcontext *mc) { g_seen.push_back({Point::kBefore, state_of(*mc)}); }
void after_routine(const kjit_mcontext *mc) { g_seen.push_back({Point::kAfter, state_of(*mc)}); }
void edge_routine(const kjit_mcontext *mc) { g_seen.push_back({Point::kEdge, state_of(*mc)}); }
void six_routine(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f) {
  g_six.push_back({a, b, c, d, e, f});
}
void writing_routine(const kjit_mcontext *mc) { const_cast<kjit_mcontext *>(mc)->gpr[KJIT_REG_RAX] = 0; }

void on_insn(kjit_insn *in, void *) {
  ASSERT_EQ(kjit_insert_context_call(in, KJIT_IPOINT_BEFORE, before_routine), 0);
  if (g_six_args) {
    ASSERT_EQ(kjit_insert_call(in, KJIT_IPOINT_BEFORE, reinterpret_cast<void *>(six_routine), 6,
                               KJIT_ARG_REG(KJIT_REG_RAX), KJIT_ARG_REG(KJIT_REG_RCX), KJIT_ARG_REG(KJIT_REG_RSP),
                               KJIT_ARG_REG(KJIT_REG_R8), KJIT_ARG_REG(KJIT_REG_R15), KJIT_ARG_FLAGS()),
              0);
  }
  if (kjit_insn_cf_class(in) == KJIT_CF_NONE) kjit_insert_context_call(in, KJIT_IPOINT_AFTER, after_routine);
  if (kjit_insn_is_conditional(in)) {
    ASSERT_EQ(kjit_insert_context_call(in, KJIT_IPOINT_TAKEN, edge_routine), 0);
    ASSERT_EQ(kjit_insert_context_call(in, KJIT_IPOINT_NOT_TAKEN, edge_routine), 0);
  }
}
const kjit_plugin kContextPlugin = {"context", nullptr, nullptr, nullptr, on_insn, nullptr, nullptr, nullptr, nullptr};

void writing_on_block(kjit_block *b, void *) {
  ASSERT_EQ(kjit_insert_context_call(kjit_block_insn(b, 0), KJIT_IPOINT_BEFORE, writing_routine), 0);
}
const kjit_plugin kWritingPlugin = {"writes", nullptr, writing_on_block, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    nullptr};

// With liveness, the six-argument call would not save registers dead at
// its point, and the next context would show what it left in them
// (kjit_mcontext's comment): it runs without.
struct Config {
  const char *name;
  bool liveness, six_args;
};

class ContextCallTest : public ::testing::TestWithParam<Config> {};

TEST_P(ContextCallTest, TheRoutineSeesTheOriginalRegistersAndLeavesThem) {
  const Capture cap = context_capture();
  const std::vector<State> want = original_states(cap);
  ASSERT_EQ(want.size(), 17u);  // of 18, all but the xor jnz jumps over
  g_seen.clear();
  g_six.clear();
  g_six_args = GetParam().six_args;
  TranslatedOptions o;
  o.quiet = true;
  o.engine.use_liveness = GetParam().liveness;
  o.plugin = &kContextPlugin;
  TranslatedRunner runner(cap, o);
  const TranslatedResult res = runner.run(0);
  ASSERT_EQ(res.error, "");
  ASSERT_EQ(res.run.reason, StopReason::kSentinel) << res.run.message;

  // Before each instruction: the original state there, in order.
  std::vector<State> before;
  for (const Seen &s : g_seen)
    if (s.point == Point::kBefore) before.push_back(s.state);
  ASSERT_EQ(before.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) expect_same(want[i], before[i], "before");
  // After an instruction and on an edge: the state of the instruction
  // that runs next.
  uint32_t after = 0, edges = 0;
  for (size_t i = 0; i < g_seen.size(); i++) {
    if (g_seen[i].point == Point::kBefore) continue;
    (g_seen[i].point == Point::kAfter ? after : edges)++;
    size_t next = i + 1;
    while (next < g_seen.size() && g_seen[next].point != Point::kBefore) next++;
    ASSERT_LT(next, g_seen.size()) << "nothing ran after 0x" << std::hex << g_seen[i].state.rip;
    expect_same(g_seen[next].state, g_seen[i].state, g_seen[i].point == Point::kAfter ? "after" : "edge");
  }
  EXPECT_EQ(after, 12u);  // push..pop, inc rdi, inc r15, pushfq, pop rsi, xor rdx
  EXPECT_EQ(edges, 2u);   // jz's not-taken edge, jnz's taken edge
  // The six-argument call at the same points read what the context holds.
  if (g_six_args) {
    ASSERT_EQ(g_six.size(), want.size());
    for (size_t i = 0; i < want.size(); i++) {
      const std::vector<uint64_t> ctx = {want[i].gpr[KJIT_REG_RAX], want[i].gpr[KJIT_REG_RCX],
                                         want[i].gpr[KJIT_REG_RSP], want[i].gpr[KJIT_REG_R8],
                                         want[i].gpr[KJIT_REG_R15], want[i].rflags};
      EXPECT_EQ(g_six[i], ctx) << "at 0x" << std::hex << want[i].rip;
    }
  }
  // The program ends with the original run's registers.
  const ReferenceResult ref = run_reference(cap);
  ASSERT_EQ(ref.run.reason, StopReason::kSentinel);
  for (int r = 0; r < 16; r++) EXPECT_EQ(res.final_regs.gpr[r], ref.final_regs.gpr[r]) << "register " << r;
  EXPECT_EQ(res.final_regs.rflags, ref.final_regs.rflags);
}

INSTANTIATE_TEST_SUITE_P(Configs, ContextCallTest,
                         ::testing::Values(Config{"liveness", true, false}, Config{"no_liveness", false, false},
                                           Config{"with_six_args", false, true}),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(ContextCall, ARoutineThatWritesItsContextFailsTheRun) {
  const Capture cap = context_capture();
  TranslatedOptions o;
  o.quiet = true;
  o.plugin = &kWritingPlugin;
  TranslatedRunner runner(cap, o);
  const TranslatedResult res = runner.run(0);
  ASSERT_EQ(res.error, "");
  EXPECT_EQ(res.run.reason, StopReason::kFault);
  EXPECT_NE(res.run.message.find("wrote its context"), std::string::npos) << res.run.message;
}

}  // namespace
}  // namespace kjit::sim
