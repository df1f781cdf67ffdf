// SPDX-License-Identifier: GPL-2.0
#include "emulator.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kjit/plugin.h"
#include "test_code.h"

namespace kjit::sim {
namespace {

using namespace test;

struct Prepared {
  Emulator emu;
  explicit Prepared(const Capture &cap) {
    EXPECT_EQ(emu.load_capture(cap), "");
    EXPECT_EQ(emu.map_sentinel(cap.sentinel), "");
    EXPECT_TRUE(emu.push(cap.sentinel));
  }
};

TEST(Emulator, RunsToSentinelAndRecordsWritesInOrder) {
  const Capture cap = make_capture(store_code(), 0x1122334455667788ull);
  Prepared p(cap);
  RunResult r = p.emu.run(cap.entry_pc, cap.sentinel, 1000);
  ASSERT_EQ(r.reason, StopReason::kSentinel) << r.message;
  EXPECT_EQ(r.insns, 5u);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 2 * 0x1122334455667789ull);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RSP), kStackTop);  // the ret popped the sentinel
  const auto &w = p.emu.writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].addr, kData);
  EXPECT_EQ(w[0].size, 8u);
  EXPECT_EQ(w[0].value, 0x1122334455667788ull);
  EXPECT_EQ(w[0].pc, kCode);
  EXPECT_EQ(w[1].addr, kData + 8);
  EXPECT_EQ(w[1].size, 4u);
  EXPECT_EQ(w[1].value, 0x55667789u);
  EXPECT_EQ(w[1].pc, kCode + 7);
}

// Unicorn 2.0.1 rejects pclmulqdq on every CPU model; crc32c's three-way
// path (patched in on QEMU's `-cpu max`) runs it on every ext4 metadata
// checksum.  (x^63 + 1)(x + 1) = x^64 + x^63 + x + 1, and the imm8 picks
// the high quadword of the destination.
TEST(Emulator, ExecutesPclmulqdqUnicornLacks) {
  const Capture cap = make_capture({
      0x48, 0xbf, 0x01, 0, 0, 0, 0, 0, 0, 0x80,  // movabs rdi, 0x8000000000000001
      0x48, 0xc7, 0xc6, 0x03, 0x00, 0x00, 0x00,  // mov rsi, 3
      0x66, 0x48, 0x0f, 0x6e, 0xc7,              // movq xmm0, rdi
      0x66, 0x4c, 0x0f, 0x6e, 0xce,              // movq xmm9, rsi
      0x66, 0x41, 0x0f, 0x3a, 0x44, 0xc1, 0x00,  // pclmulqdq xmm0, xmm9, 0x00
      0x66, 0x48, 0x0f, 0x7e, 0xc0,              // movq rax, xmm0
      0x66, 0x0f, 0x73, 0xd8, 0x08,              // psrldq xmm0, 8
      0x66, 0x48, 0x0f, 0x7e, 0xc2,              // movq rdx, xmm0
      0x66, 0x41, 0x0f, 0x3a, 0x44, 0xc1, 0x01,  // pclmulqdq xmm0, xmm9, 0x01: xmm0's high, 0 (its low is 1)
      0x66, 0x48, 0x0f, 0x7e, 0xc1,              // movq rcx, xmm0
      0xc3});
  Prepared p(cap);
  RunResult r = p.emu.run(cap.entry_pc, cap.sentinel, 1000);
  ASSERT_EQ(r.reason, StopReason::kSentinel) << r.message;
  EXPECT_EQ(r.insns, 11u);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 0x8000000000000003ull);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RDX), 1u);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RCX), 0u);
}

// Unicorn 2.0.1 rejects popcnt on every CPU model; the kernel's hweight
// alternatives are patched to it, so the emulator executes it itself.
TEST(Emulator, ExecutesPopcntUnicornLacks) {
  const Capture cap = make_capture({
      0x48, 0xc7, 0xc7, 0xff, 0x0f, 0x00, 0x00,  // mov rdi, 0xfff
      0xf3, 0x48, 0x0f, 0xb8, 0xc7,              // popcnt rax, rdi
      0x31, 0xf6,                                // xor esi, esi
      0xf3, 0x0f, 0xb8, 0xce,                    // popcnt ecx, esi (ZF set)
      0x0f, 0x94, 0xc2,                          // setz dl
      0xc3});
  Prepared p(cap);
  RunResult r = p.emu.run(cap.entry_pc, cap.sentinel, 1000);
  ASSERT_EQ(r.reason, StopReason::kSentinel) << r.message;
  EXPECT_EQ(r.insns, 6u);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 12u);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RCX), 0u);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RDX) & 0xff, 1u);
}

TEST(Emulator, EndlessLoopHitsTheBudget) {
  const Capture cap = make_capture({0xeb, 0xfe});  // jmp .
  Prepared p(cap);
  RunResult r = p.emu.run(cap.entry_pc, cap.sentinel, 500);
  EXPECT_EQ(r.reason, StopReason::kBudget);
  EXPECT_EQ(r.insns, 500u);
}

TEST(Emulator, ReportsUnmappedAccessWithAddress) {
  // mov rax, [0x12345678]
  const Capture cap = make_capture({0x48, 0x8b, 0x04, 0x25, 0x78, 0x56, 0x34, 0x12, 0xc3});
  Prepared p(cap);
  RunResult r = p.emu.run(cap.entry_pc, cap.sentinel, 100);
  EXPECT_EQ(r.reason, StopReason::kFault);
  EXPECT_EQ(r.fault_addr, 0x12345678u);
  EXPECT_EQ(r.pc, kCode);
  EXPECT_NE(r.message.find("0x12345678"), std::string::npos) << r.message;
}

TEST(Emulator, ReportsInvalidInstructionAndTraps) {
  for (std::vector<uint8_t> code : {std::vector<uint8_t>{0x90, 0x0f, 0x0b},    // nop; ud2
                                    std::vector<uint8_t>{0x90, 0xcc}}) {      // nop; int3
    const Capture cap = make_capture(code);
    Prepared p(cap);
    RunResult r = p.emu.run(cap.entry_pc, cap.sentinel, 100);
    EXPECT_EQ(r.reason, StopReason::kFault);
    EXPECT_EQ(r.pc, kCode + 1) << r.message;
  }
}

TEST(Emulator, WriteToReadOnlyCodeFaults) {
  // mov [rip-7], al: writes into the code region itself.
  const Capture cap = make_capture({0x88, 0x05, 0xf9, 0xff, 0xff, 0xff, 0xc3});
  Prepared p(cap);
  RunResult r = p.emu.run(cap.entry_pc, cap.sentinel, 100);
  EXPECT_EQ(r.reason, StopReason::kFault);
  EXPECT_EQ(r.fault_addr, kCode + 6 - 7);
}

TEST(Emulator, GsBaseIsHonoured) {
  // mov rax, gs:[8]; ret
  CaptureBuilder b;
  std::vector<uint8_t> data(4096, 0);
  data[8] = 0x2a;
  b.add_region(kCode, {0x65, 0x48, 0x8b, 0x04, 0x25, 0x08, 0, 0, 0, 0xc3}, kPermR | kPermX)
      .add_region(kData, data, kPermR | kPermW)
      .add_stack(kStackTop, 0x1000)
      .set_gs_base(kData)
      .set_entry(kCode);
  Capture cap;
  ASSERT_EQ(b.build(&cap), "");
  Prepared p(cap);
  ASSERT_EQ(p.emu.run(cap.entry_pc, cap.sentinel, 10).reason, StopReason::kSentinel);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 0x2au);
}

TEST(Emulator, HookCanRedirectExecution) {
  // The hook at kCode skips the first instruction (mov eax, 1) and lands on
  // the second (mov ebx, 2; ret): RIP writes in hooks work in this Unicorn.
  const Capture cap = make_capture({0xb8, 0x01, 0, 0, 0, 0xbb, 0x02, 0, 0, 0, 0xc3});
  Prepared p(cap);
  int calls = 0;
  p.emu.add_code_hook(kCode, kCode, [&](Emulator &e, uint64_t, uint32_t) {
    calls++;
    e.set_rip(kCode + 5);
  });
  p.emu.set_gpr(KJIT_REG_RAX, 0);
  ASSERT_EQ(p.emu.run(cap.entry_pc, cap.sentinel, 10).reason, StopReason::kSentinel);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 0u);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RBX), 2u);
}

TEST(Emulator, HostMappedCodeNeedsInvalidation) {
  // Code in host memory: run it, change it from the host, invalidate, run
  // again and see the new code.
  Emulator emu;
  const uint64_t at = 0xffffffffc0000000ull;
  alignas(4096) static uint8_t buf[4096];
  const uint8_t v1[] = {0xb8, 0x01, 0, 0, 0, 0xc3};  // mov eax, 1; ret
  memcpy(buf, v1, sizeof v1);
  ASSERT_EQ(emu.map_host(at, buf, sizeof buf, kPermR | kPermX), "");
  ASSERT_EQ(emu.map_stack(kStackTop, 0x1000), "");
  ASSERT_EQ(emu.map_sentinel(kDefaultSentinel), "");
  emu.set_gpr(KJIT_REG_RSP, kStackTop);
  ASSERT_TRUE(emu.push(kDefaultSentinel));
  ASSERT_EQ(emu.run(at, kDefaultSentinel, 10).reason, StopReason::kSentinel);
  EXPECT_EQ(emu.gpr(KJIT_REG_RAX), 1u);
  buf[1] = 7;
  emu.invalidate(at, sizeof v1);
  ASSERT_TRUE(emu.push(kDefaultSentinel));
  ASSERT_EQ(emu.run(at, kDefaultSentinel, 10).reason, StopReason::kSentinel);
  EXPECT_EQ(emu.gpr(KJIT_REG_RAX), 7u);
}

// The gdb server stops a run before an instruction and resumes it later
// (tools/kjit-sim/replay_cursor.h): a hook that stops leaves the
// instruction unexecuted, at rip, for the next run to execute once.
TEST(Emulator, AStopInAHookLeavesTheInstructionForTheNextRun) {
  // inc rax; inc rax; inc rax; ret
  const Capture cap = make_capture({0x48, 0xff, 0xc0, 0x48, 0xff, 0xc0, 0x48, 0xff, 0xc0, 0xc3});
  Prepared p(cap);
  p.emu.set_gpr(KJIT_REG_RAX, 0);
  bool stop = true;
  p.emu.add_code_hook(kCode + 3, kCode + 3, [&](Emulator &e, uint64_t, uint32_t) {
    if (stop) e.stop();
  });
  RunResult r = p.emu.run(cap.entry_pc, cap.sentinel, 10);
  ASSERT_EQ(r.reason, StopReason::kStopped) << r.message;
  EXPECT_EQ(p.emu.rip(), kCode + 3);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 1u);
  stop = false;
  r = p.emu.run(p.emu.rip(), cap.sentinel, 10);
  ASSERT_EQ(r.reason, StopReason::kSentinel) << r.message;
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 3u);
}

// A checkpoint's registers: saved between runs, restored after more code
// ran, flags included (Unicorn keeps them in a lazy form).
TEST(Emulator, SavedCpuStateComesBack) {
  // add rax, rax (rax = 2^63: carry, zero); inc rax; ret
  const Capture cap = make_capture({0x48, 0x01, 0xc0, 0x48, 0xff, 0xc0, 0xc3});
  Prepared p(cap);
  p.emu.set_gpr(KJIT_REG_RAX, uint64_t{1} << 63);
  bool stop = true;
  p.emu.add_code_hook(kCode + 3, kCode + 3, [&](Emulator &e, uint64_t, uint32_t) {
    if (stop) e.stop();
  });
  ASSERT_EQ(p.emu.run(cap.entry_pc, cap.sentinel, 10).reason, StopReason::kStopped);
  const uint64_t flags = p.emu.rflags();
  EXPECT_EQ(flags & 0x41, 0x41u);  // CF, ZF
  CpuState saved = p.emu.save_cpu();
  ASSERT_TRUE(saved.valid());
  stop = false;
  ASSERT_EQ(p.emu.run(p.emu.rip(), cap.sentinel, 10).reason, StopReason::kSentinel);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 1u);
  ASSERT_TRUE(p.emu.restore_cpu(saved));
  EXPECT_EQ(p.emu.rip(), kCode + 3);
  EXPECT_EQ(p.emu.gpr(KJIT_REG_RAX), 0u);
  EXPECT_EQ(p.emu.rflags(), flags);
  bool has_writable = false;
  for (const MappedRange &m : p.emu.mapped()) has_writable |= m.begin <= kData && kData < m.end && (m.perms & kPermW);
  EXPECT_TRUE(has_writable);
}

}  // namespace
}  // namespace kjit::sim
