// SPDX-License-Identifier: GPL-2.0
// The engine API (include/kjit/engine.h, core/engine.cc) as a host uses it:
// entry, the gates' direct exits and indirect misses, stop addresses,
// flush, the original-pc map and the stats.
#include "kjit/engine.h"
#include "kjit/os_shim.h"

#include "core/ibl.h"
#include "engine/engine_fixture.h"

namespace kjit {
namespace {

using test::kText;

class EngineApiTest : public test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    add_functions();
  }
  void add_functions() {
    // kText:      mov eax, 1 ; ret
    // kText+0x40: mov edx, 2 ; ret
    // kText+0x80: jz +0x10 ; (falls to kText+0x82)
    std::vector<uint8_t> code(0x100, 0xcc);
    const uint8_t f[] = {0xb8, 0x01, 0, 0, 0, 0xc3}, g[] = {0xba, 0x02, 0, 0, 0, 0xc3};
    memcpy(&code[0], f, sizeof(f));
    memcpy(&code[0x40], g, sizeof(g));
    code[0x80] = 0x74, code[0x81] = 0x10;
    test_shim_add_code(kText, code);
  }
  // The miss stub's return address of the indirect site of the block at
  // `exec` (a `ret` block: jmp chain).
  uint64_t miss_stub_return(uint64_t site_jmp) {
    // An empty chain jumps straight to its miss stub: call gate_indirect.
    uint64_t s = skip_return_swap(branch_target(return_site_tail(site_jmp)));
    EXPECT_EQ(branch_target(s), test::kGateIndirect);
    return s + 5;
  }
};

TEST_F(EngineApiTest, EnterTranslatesAndTheCopyIsLookedUpNextTime) {
  kjit_engine_stats before = stats();
  uint64_t exec = kjit_engine_enter(kText);
  EXPECT_TRUE(kjit_engine_is_cache_address(exec));
  EXPECT_EQ(active().table.find(kText)->exec, exec);
  kjit_engine_stats s = stats();
  EXPECT_EQ(s.blocks_built, before.blocks_built + 1);
  EXPECT_EQ(s.insns_translated, before.insns_translated + 2);
  EXPECT_GT(s.cache_bytes_used, before.cache_bytes_used);
  EXPECT_GT(s.arena_bytes_used, before.arena_bytes_used);
  // The second entry finds the copy (in the IBL, without the lock).
  EXPECT_EQ(kjit_engine_enter(kText), exec);
  EXPECT_EQ(stats().blocks_built, s.blocks_built);
  EXPECT_EQ(stats().fast_entries, s.fast_entries + 1);
}

TEST_F(EngineApiTest, TheCopyComputesWhatTheOriginalDoes) {
  uint64_t exec = kjit_engine_enter(kText);
  auto emu = emulator();
  const uint64_t sp = kStackTop - 0x100, ret = kText + 0xf0;
  emu->write(sp, &ret, 8);
  emu->set_gpr(KJIT_REG_RSP, sp);
  emu->set_gpr(KJIT_REG_RCX, 0x77);
  sim::RunResult r = emu->run(exec, test::kGateIndirect, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RAX), 1u);
  EXPECT_EQ(emu->gpr(KJIT_REG_RCX), ret);  // the return target, for the gate
}

// Only a function the host calls compiled C gets the ABI return site; its
// copy still computes what the original does, the gate getting the target
// in rcx as from every site.
TEST_F(EngineApiTest, AFunctionTheHostCallsCGetsTheAbiReturnSite) {
  test_shim_add_c_function(kText + 0x40, kText + 0x80);
  const uint64_t asm_exec = kjit_engine_enter(kText), c_exec = kjit_engine_enter(kText + 0x40);
  EXPECT_FALSE(is_abi_return_site(asm_exec + 5));  // after mov eax, 1
  EXPECT_TRUE(is_abi_return_site(c_exec + 5));     // after mov edx, 2
  auto emu = emulator();
  const uint64_t sp = kStackTop - 0x100, ret = kText + 0xf0;
  emu->write(sp, &ret, 8);
  emu->set_gpr(KJIT_REG_RSP, sp);
  sim::RunResult r = emu->run(c_exec, test::kGateIndirect, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RDX), 2u);
  EXPECT_EQ(emu->gpr(KJIT_REG_RCX), ret);
}

TEST_F(EngineApiTest, AbiReturnsOffKeepsTheGeneralSite) {
  ASSERT_EQ(init([](kjit_engine_options *o) { o->abi_returns = 0; }), 0);
  add_functions();
  test_shim_add_c_function(kText + 0x40, kText + 0x80);
  EXPECT_FALSE(is_abi_return_site(kjit_engine_enter(kText + 0x40) + 5));
}

TEST_F(EngineApiTest, OriginalPcMapsCopiedInstructionsOnly) {
  uint64_t exec = kjit_engine_enter(kText);
  EXPECT_EQ(kjit_engine_original_pc(exec), kText);
  EXPECT_EQ(kjit_engine_original_pc(exec + 4), kText);  // inside mov eax, 1
  EXPECT_EQ(kjit_engine_original_pc(exec + 5), 0u);     // the engine's ret sequence
  EXPECT_EQ(kjit_engine_original_pc(test::kCodeExec + test::kCodeBytes + 8), 0u);
}

// The oops report's variant: the same answer while the lock is free, 0 at
// once (no wait) while it is taken, and the lock left as it was.
TEST_F(EngineApiTest, OriginalPcNowaitAnswersOnlyWhenTheLockIsFree) {
  uint64_t exec = kjit_engine_enter(kText);
  EXPECT_EQ(kjit_engine_original_pc_nowait(exec), kText);
  kjit_os_lock();
  EXPECT_EQ(kjit_engine_original_pc_nowait(exec), 0u);
  kjit_os_unlock();
  EXPECT_EQ(kjit_engine_original_pc_nowait(exec + 4), kText);
  EXPECT_EQ(kjit_os_trylock(), 1);
  kjit_os_unlock();
}

// The host's check of kernel functions for a known bug (kernel_quirks.c):
// an address stored as a sign-extended immediate, loaded RIP-relative or
// called is found; one the code does not name, or code that cannot be
// read, is not.
TEST(CodeNamesValue, FindsImmediatesRipRelativeAddressesAndBranchTargets) {
  test_shim_reset();
  const uint64_t base = 0xffffffff81200000ull, handler = 0xffffffff811360a0ull;
  std::vector<uint8_t> code = {
      0x48, 0xc7, 0x42, 0x40, 0xa0, 0x60, 0x13, 0x81,  // movq $handler, 0x40(%rdx)
      0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00,        // mov 0x10(%rip), %rax  -> base+0x1f
      0xe8, 0x00, 0x01, 0x00, 0x00,                    // call base+0x114
      0xc3};
  test_shim_add_code(base, code);
  EXPECT_EQ(kjit_engine_code_names_value(base, code.size(), handler), 1);
  EXPECT_EQ(kjit_engine_code_names_value(base, code.size(), base + 0x1f), 1);
  EXPECT_EQ(kjit_engine_code_names_value(base, code.size(), base + 0x114), 1);
  EXPECT_EQ(kjit_engine_code_names_value(base, code.size(), handler + 8), 0);
  // Only the range asked about counts: the store is the first instruction.
  EXPECT_EQ(kjit_engine_code_names_value(base + 8, code.size() - 8, handler), 0);
  EXPECT_EQ(kjit_engine_code_names_value(base + 0x10000, 16, handler), 0);  // nothing there
}

TEST_F(EngineApiTest, UntranslatableAndStopAddressesRunNatively) {
  uint64_t fallbacks = stats().fallbacks;
  EXPECT_EQ(kjit_engine_enter(kText + 0x1000), kText + 0x1000);  // no code there
  EXPECT_EQ(kjit_engine_add_stop_address(kText + 0x40), 0);
  EXPECT_TRUE(kjit_engine_is_stop_address(kText + 0x40));
  EXPECT_EQ(kjit_engine_enter(kText + 0x40), kText + 0x40);
  EXPECT_EQ(stats().blocks_built, 0u);
  EXPECT_EQ(stats().stop_addresses, 1u);
  EXPECT_EQ(stats().fallbacks, fallbacks);  // native by design, not a fallback
}

TEST_F(EngineApiTest, IndirectMissServesTheTargetAndChainsIt) {
  uint64_t exec = kjit_engine_enter(kText);
  uint64_t site = exec + 5;  // after mov eax, 1: the ret's jmp to its chain
  uint64_t stub_return = miss_stub_return(site);
  uint64_t misses = stats().indirect_misses, links = stats().chain_links;
  uint64_t dest = kjit_engine_indirect_miss(stub_return, kText + 0x40);
  EXPECT_EQ(dest, active().table.find(kText + 0x40)->exec);
  EXPECT_EQ(stats().indirect_misses, misses + 1);
  EXPECT_EQ(stats().chain_links, links + 1);
  EXPECT_EQ(ibl_lookup(active(), kText + 0x40), 0u);  // linked: no IBL slot taken
  // The next return to kText+0x40 hits the new link without a gate.
  auto emu = emulator();
  const uint64_t sp = kStackTop - 0x100, ret = kText + 0x40;
  emu->write(sp, &ret, 8);
  emu->set_gpr(KJIT_REG_RSP, sp);
  emu->set_gpr(KJIT_REG_RCX, 0x77);
  sim::RunResult r = emu->run(exec, dest, 200);
  ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  EXPECT_EQ(emu->gpr(KJIT_REG_RCX), 0x77u);
  EXPECT_EQ(emu->gpr(KJIT_REG_RSP), sp + 8);
}

// Past the chain's maximum length, a target goes into the IBL instead.
TEST_F(EngineApiTest, TargetsBeyondAFullChainGoToTheIbl) {
  test_shim_add_code(kText + 0x200, std::vector<uint8_t>{0x90, 0x90, 0x90, 0x90, 0xc3});
  uint64_t stub_return = miss_stub_return(kjit_engine_enter(kText) + 5);
  const uint64_t targets[] = {kText + 0x200, kText + 0x201, kText + 0x202, kText + 0x203, kText + 0x204};
  static_assert(sizeof(targets) / sizeof(targets[0]) == 5, "one more than the default chain length");
  for (uint64_t t : targets) kjit_engine_indirect_miss(stub_return, t);
  for (int i = 0; i < 4; i++) EXPECT_EQ(ibl_lookup(active(), targets[i]), 0u) << i;
  EXPECT_EQ(ibl_lookup(active(), targets[4]), active().table.find(targets[4])->exec);
}

// A stub names its record by arena offset / 8: a chain site allocated after
// a 4-byte record must still be found again, or the gate reads another
// record's fields as the site's (its link count, and no link is ever added).
TEST_F(EngineApiTest, StubIdsNameChainSitesAfterAnOddAllocation) {
  kjit_engine_enter(kText);
  Epoch &e = active();
  ASSERT_NE(e.arena.alloc(4, 4), nullptr);
  ChainSite *site = e.arena.alloc_array<ChainSite>(1);
  ASSERT_NE(site, nullptr);
  EXPECT_EQ(e.record_of(e.id_of(site)), site);
  Exit *exit = e.arena.alloc_array<Exit>(1);
  ASSERT_NE(exit, nullptr);
  EXPECT_EQ(e.record_of(e.id_of(exit)), exit);
}

TEST_F(EngineApiTest, UnknownStubIsLoud) {
  EXPECT_EQ(kjit_engine_direct_exit(kText), 0u);
  EXPECT_EQ(kjit_engine_indirect_miss(kText, kText + 0x40), 0u);
}

TEST_F(EngineApiTest, FlushEmptiesTheCache) {
  uint64_t exec = kjit_engine_enter(kText);
  kjit_engine_stats before = stats();
  ASSERT_EQ(kjit_engine_flush(), 0);
  kjit_engine_stats s = stats();
  EXPECT_EQ(s.flushes, before.flushes + 1);
  EXPECT_LT(s.cache_bytes_used, before.cache_bytes_used);
  EXPECT_EQ(active().table.find(kText), nullptr);
  EXPECT_EQ(ibl_lookup(active(), kText), 0u);
  EXPECT_EQ(kjit_engine_original_pc(exec), 0u);  // its half is free
  uint64_t again = kjit_engine_enter(kText);
  EXPECT_NE(again, exec);
  EXPECT_TRUE(active().contains_exec(again));
  EXPECT_EQ(stats().blocks_built, before.blocks_built + 1);
}

TEST_F(EngineApiTest, BuildOnlyReportsSuccessors) {
  uint64_t succ[4];
  uint32_t nsucc = 0, ninsns = 0;
  ASSERT_EQ(kjit_engine_build_only(kText + 0x80, succ, &nsucc, &ninsns), 0);
  ASSERT_EQ(nsucc, 2u);
  EXPECT_EQ(succ[0], kText + 0x92);
  EXPECT_EQ(succ[1], kText + 0x82);
  EXPECT_EQ(ninsns, 1u);
  // Built once: the second call reports the same from the table's block.
  uint64_t built = stats().blocks_built;
  ASSERT_EQ(kjit_engine_build_only(kText + 0x80, succ, &nsucc, &ninsns), 0);
  EXPECT_EQ(nsucc, 2u);
  EXPECT_EQ(stats().blocks_built, built);
}

TEST_F(EngineApiTest, InitRejectsBadMemory) {
  kjit_os_memory mem{};
  kjit_os_kernel_facts facts{};
  kjit_engine_fini();
  EXPECT_EQ(kjit_engine_init(&mem, &facts, nullptr), -22);
  EXPECT_EQ(kjit_engine_enter(kText), kText);  // not initialised: native
}

// Plugins hold pointers into CPU 0's copy of a per-CPU window: a window
// without its host views is refused, not used.
TEST_F(EngineApiTest, InitRejectsAPerCpuWindowWithoutCopies) {
  EXPECT_EQ(init(nullptr, test::kCodeBytes, [](kjit_os_memory *m) { m->percpu_size = 64; }), -22);
  EXPECT_EQ(init(nullptr, test::kCodeBytes,
                 [](kjit_os_memory *m) {
                   static uint8_t *const kNoCopies[1] = {nullptr};
                   m->percpu_size = 64;
                   m->percpu_ncpus = 1;
                   m->percpu_host_views = kNoCopies;
                 }),
            -22);
  static uint8_t copy0[64];
  EXPECT_EQ(init(nullptr, test::kCodeBytes,
                 [](kjit_os_memory *m) {
                   static uint8_t *const kOneCopy[1] = {copy0};
                   m->percpu_size = 64;
                   m->percpu_ncpus = 1;
                   m->percpu_host_views = kOneCopy;
                 }),
            0);
  EXPECT_NE(kjit_alloc_percpu(8), nullptr);
}

// A NOP (padding, an fentry site no ftrace user enabled) is not copied:
// the translation starts at the mov; the block still holds 3 instructions.
TEST_F(EngineApiTest, NopsAreNotCopied) {
  const uint8_t code[] = {0x0f, 0x1f, 0x44, 0x00, 0x00, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};
  test_shim_add_code(kText + 0x400, std::vector<uint8_t>(code, code + sizeof(code)));
  kjit_engine_stats before = stats();
  uint64_t exec = kjit_engine_enter(kText + 0x400);
  ASSERT_TRUE(kjit_engine_is_cache_address(exec));
  EXPECT_EQ(host(exec)[0], 0xb8);
  EXPECT_EQ(kjit_engine_original_pc(exec), kText + 0x405);
  EXPECT_EQ(active().table.find(kText + 0x400)->npcmap, 1u);
  EXPECT_EQ(stats().insns_translated, before.insns_translated + 3);
}

}  // namespace
}  // namespace kjit
