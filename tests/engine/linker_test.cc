// SPDX-License-Identifier: GPL-2.0
// The linker: an exit's rel32 first leads to its dispatcher stub and is
// re-pointed at the target's translation (or at native code); exits built
// before their target wait in its table slot.  Each check decodes the
// patched bytes: the jump must really go where the record says.
#include "core/linker.h"

#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

class LinkerTest : public test::EngineTest {
 protected:
  // An exit toward `target_pc` at a new patchable jmp (jcc when cond >= 0)
  // whose rel32 leads to a stub-like placeholder for now.
  Exit *new_exit(uint64_t target_pc, int cond = -1) {
    Epoch &e = active();
    Exit *x = e.arena.alloc_array<Exit>(1);
    uint32_t start = emit([&](x86::CodeWriter &w, uint32_t at) {
      int32_t f = cond >= 0 ? w.jcc_patchable(static_cast<uint8_t>(cond), w.here()) : w.jmp_patchable(w.here());
      x->field_offset = at + static_cast<uint32_t>(f);
      w.byte(0xcc);  // the "stub": right after the jump
    });
    x->target_pc = target_pc;
    exits_at_[x] = e.exec_at(start);
    return x;
  }
  // A block record whose translation starts at a new code-region offset.
  Block *new_block(uint64_t pc) {
    Epoch &e = active();
    Block *b = e.arena.alloc_array<Block>(1);
    uint32_t start = emit([](x86::CodeWriter &w, uint32_t) { w.byte(0x90); });
    b->orig_pc = pc;
    b->exec = e.exec_at(start);
    return b;
  }
  uint64_t goes_to(Exit *x) { return branch_target(exits_at_[x]); }
  std::map<Exit *, uint64_t> exits_at_;
};

TEST_F(LinkerTest, LinkedExitJumpsToTheTranslation) {
  Exit *x = new_exit(kText + 0x40);
  Block *b = new_block(kText + 0x40);
  uint64_t links = stats().direct_links;
  ASSERT_NE(goes_to(x), b->exec);
  ASSERT_TRUE(link_exit(active(), x, b));
  EXPECT_EQ(goes_to(x), b->exec);
  EXPECT_TRUE(x->linked);
  EXPECT_EQ(stats().direct_links, links + 1);
}

TEST_F(LinkerTest, ConditionalExitKeepsItsCondition) {
  Exit *x = new_exit(kText + 0x40, 0x5);  // jnz
  Block *b = new_block(kText + 0x40);
  ASSERT_TRUE(link_exit(active(), x, b));
  x86::Insn in = decode_skipping_nops(exits_at_[x]);
  EXPECT_EQ(in.cf, KJIT_CF_JCC);
  EXPECT_EQ(in.jcc_cond, 0x5);
  EXPECT_EQ(in.target, b->exec);
}

TEST_F(LinkerTest, ALinkedExitIsNotLinkedAgain) {
  Exit *x = new_exit(kText + 0x40);
  Block *first = new_block(kText + 0x40), *second = new_block(kText + 0x40);
  ASSERT_TRUE(link_exit(active(), x, first));
  uint64_t links = stats().direct_links;
  EXPECT_TRUE(link_exit(active(), x, second));
  EXPECT_EQ(goes_to(x), first->exec);
  EXPECT_EQ(stats().direct_links, links);
}

TEST_F(LinkerTest, UnalignedFieldIsRefusedAndKeepsItsTarget) {
  // A plain (unpadded) jmp whose rel32 straddles a 4-byte boundary: another
  // CPU could fetch it torn, so the linker must leave it alone.
  Epoch &e = active();
  Exit *x = e.arena.alloc_array<Exit>(1);
  uint64_t jmp_at = 0;
  emit([&](x86::CodeWriter &w, uint32_t at) {
    while (((w.here() + 1) & 3) == 0) w.byte(0x90);
    jmp_at = w.here();
    int32_t f = w.jmp(w.here() + 5);
    x->field_offset = at + static_cast<uint32_t>(f);
    w.byte(0xcc);
  });
  ASSERT_NE(e.exec_at(x->field_offset) & 3, 0u);
  Block *b = new_block(kText + 0x40);
  uint64_t links = stats().direct_links;
  EXPECT_FALSE(link_exit(e, x, b));
  EXPECT_EQ(branch_target(jmp_at), jmp_at + 5);
  EXPECT_FALSE(x->linked);
  EXPECT_EQ(stats().direct_links, links);
}

TEST_F(LinkerTest, NativeExitJumpsToTheOriginalCodeThroughACount) {
  Exit *x = new_exit(kText + 0x80);
  ASSERT_TRUE(link_exit_native(active(), x, KJIT_DEPART_NATIVE_CALL));
  // pushfq ; lock inc [the count] ; popfq ; jmp kText+0x80
  uint64_t t = goes_to(x);
  ASSERT_TRUE(active().contains_exec(t));
  EXPECT_EQ(*host(t), 0x9c);
  x86::Insn inc = decode(t + 1);
  EXPECT_EQ(inc.bytes[0], 0xf0);
  EXPECT_EQ(*host(t + 1 + inc.length), 0x9d);
  EXPECT_EQ(branch_target(t + 2 + inc.length), kText + 0x80);
  EXPECT_TRUE(x->linked);
}

TEST_F(LinkerTest, WaitingExitsAreAllLinkedWhenTheTargetIsBuilt) {
  Epoch &e = active();
  Exit *a = new_exit(kText + 0x40), *b = new_exit(kText + 0x40, 0x4);
  TableSlot *slot = e.table.slot(kText + 0x40);
  a->next_waiting = slot->waiting;
  slot->waiting = a;
  b->next_waiting = slot->waiting;
  slot->waiting = b;
  Block *target = new_block(kText + 0x40);
  link_waiting(e, slot, target);
  EXPECT_EQ(goes_to(a), target->exec);
  EXPECT_EQ(goes_to(b), target->exec);
  EXPECT_EQ(slot->waiting, nullptr);
  EXPECT_EQ(a->next_waiting, nullptr);
  EXPECT_EQ(b->next_waiting, nullptr);
}

// The same through the block builder: real blocks, real stubs.
class BuiltLinkTest : public test::EngineTest {
 protected:
  void SetUp() override {
    // One block per build: these tests are about the links between blocks
    // (traces, which lay a jump's target in its place: trace_test.cc).
    ASSERT_EQ(init([](kjit_engine_options *o) { o->max_trace_blocks = 1; }), 0);
    // kText: jmp kText+0x10 ; kText+0x10: jmp kText+0x20 ; kText+0x20: jmp kText+0x1000 (no code)
    std::vector<uint8_t> code(0x30, 0xcc);
    code[0x00] = 0xeb, code[0x01] = 0x0e;
    code[0x10] = 0xeb, code[0x11] = 0x0e;
    code[0x20] = 0xe9, code[0x21] = 0xdb, code[0x22] = 0x0f, code[0x23] = 0, code[0x24] = 0;
    test_shim_add_code(kText, code);
  }
};

TEST_F(BuiltLinkTest, ExitToABuiltBlockIsLinkedAtOnce) {
  uint64_t b = kjit_engine_enter(kText + 0x10);
  uint64_t a = kjit_engine_enter(kText);
  EXPECT_EQ(branch_target(a), b);
}

TEST_F(BuiltLinkTest, WaitingExitIsBackPatched) {
  uint64_t a = kjit_engine_enter(kText);
  uint64_t stub = branch_target(a);
  EXPECT_EQ(branch_target(stub), test::kGateDirect);  // call gate_direct ; .long id
  uint64_t b = kjit_engine_enter(kText + 0x10);
  EXPECT_EQ(branch_target(a), b);
}

TEST_F(BuiltLinkTest, ExitToCodeThatCannotBeTranslatedGoesNativeThroughACount) {
  uint64_t c = kjit_engine_enter(kText + 0x20);
  // jmp trampoline ; trampoline: pushfq ; lock inc [count] ; popfq ; jmp kText+0x1000
  uint64_t t = branch_target(c);
  ASSERT_TRUE(active().contains_exec(t));
  x86::Insn inc = decode(t + 1);
  EXPECT_EQ(inc.bytes[0], 0xf0);
  EXPECT_EQ(branch_target(t + 2 + inc.length), kText + 0x1000);
}

TEST_F(BuiltLinkTest, DirectExitThroughTheGateLinksTheExit) {
  uint64_t a = kjit_engine_enter(kText);
  uint64_t stub = branch_target(a);
  uint64_t exits = stats().dispatcher_exits, built = stats().blocks_built;
  uint64_t b = kjit_engine_direct_exit(stub + 5);  // the stub's return address
  EXPECT_TRUE(active().contains_exec(b));
  EXPECT_EQ(active().table.find(kText + 0x10)->exec, b);
  EXPECT_EQ(branch_target(a), b);
  EXPECT_EQ(stats().dispatcher_exits, exits + 1);
  EXPECT_EQ(stats().blocks_built, built + 1);
}

TEST_F(BuiltLinkTest, LinkedExitRunsIntoTheTarget) {
  uint64_t a = kjit_engine_enter(kText);
  uint64_t b = kjit_engine_enter(kText + 0x10);
  auto emu = emulator();
  emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
  sim::RunResult r = emu->run(a, b, 100);
  EXPECT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(r.pc, b);
}

}  // namespace
}  // namespace kjit
