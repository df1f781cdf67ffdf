// SPDX-License-Identifier: GPL-2.0
#include "sim_shim.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "kjit/plugin.h"
#include "test_code.h"

namespace kjit::sim {
namespace {

using namespace test;

const char *kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T startup_64\n"
    "ffffffff81001000 T __fentry__\n"
    "ffffffff81002000 T __x86_return_thunk\n"
    "ffffffff81003000 T __x86_indirect_thunk_rax\n"
    "ffffffff81003020 T __x86_indirect_thunk_r11\n"
    "ffffffff81004000 t __schedule\n"
    "0000000000000000 A fixed_percpu_data\n"
    "ffffffffc0100000 t mod_fn\t[somemod]\n";

class Shim : public ::testing::Test {
 protected:
  void TearDown() override { shim_reset(); }
};

TEST_F(Shim, ReadsOnlyExecutableCaptureMemory) {
  CaptureBuilder b;
  b.add_region(0x1000, {1, 2, 3, 4}, kPermR | kPermX)
      .add_region(0x1004, {5, 6}, kPermR | kPermX)  // adjacent: reads continue
      .add_region(0x2000, {7, 8}, kPermR | kPermW)
      .set_entry(0x1000);
  Capture cap;
  ASSERT_EQ(b.build(&cap), "");
  ShimConfig cfg;
  cfg.capture = &cap;
  shim_configure(cfg);
  uint8_t out[16] = {};
  EXPECT_EQ(kjit_os_read_code(0x1002, out, 16), 4u);
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[3], 6);
  EXPECT_EQ(kjit_os_read_code(0x2000, out, 2), 0u);
  EXPECT_EQ(kjit_os_read_code(0x5000, out, 2), 0u);
  EXPECT_TRUE(kjit_os_may_translate(0x1005));
  EXPECT_FALSE(kjit_os_may_translate(0x1006));
  EXPECT_FALSE(kjit_os_may_translate(0x2000));
  EXPECT_EQ(kjit_os_classify_site(0x1000, 0), KJIT_SITE_PLAIN);
  EXPECT_EQ(kjit_os_cpu(), 0u);
}

TEST_F(Shim, SymbolsAndKernelFacts) {
  SymbolTable syms;
  ASSERT_EQ(syms.parse_kallsyms(kKallsyms), "");
  ShimConfig cfg;
  cfg.symbols = &syms;
  shim_configure(cfg);
  char buf[64];
  kjit_os_symbolize(0xffffffff81000010ull, buf, sizeof buf);
  EXPECT_STREQ(buf, "_stext+0x10");
  kjit_os_symbolize(0xffffffffc0100004ull, buf, sizeof buf);
  EXPECT_STREQ(buf, "mod_fn+0x4");
  kjit_os_symbolize(0x10, buf, sizeof buf);
  EXPECT_STREQ(buf, "");
  kjit_os_symbolize(0xffffffff81000010ull, buf, 4);
  EXPECT_STREQ(buf, "_st");
  const kjit_os_kernel_facts f = shim_kernel_facts();
  EXPECT_EQ(f.return_thunk, 0xffffffff81002000ull);
  EXPECT_EQ(f.fentry, 0xffffffff81001000ull);
  EXPECT_EQ(f.schedule_funnel, 0xffffffff81004000ull);
  EXPECT_EQ(f.retpoline_thunk[KJIT_REG_RAX], 0xffffffff81003000ull);
  EXPECT_EQ(f.retpoline_thunk[KJIT_REG_R11], 0xffffffff81003020ull);
  EXPECT_EQ(f.retpoline_thunk[KJIT_REG_RCX], 0u);
  EXPECT_EQ(f.gate_direct, kGateBase);
  EXPECT_EQ(f.gate_indirect, kGateBase + kGateIndirectOffset);
}

TEST_F(Shim, NoSymbolsMeansZeroFacts) {
  shim_configure(ShimConfig{});
  const kjit_os_kernel_facts f = shim_kernel_facts();
  EXPECT_EQ(f.return_thunk, 0u);
  EXPECT_NE(f.gate_direct, 0u);
}

TEST(Symbols, RejectsGarbageAndZeroedAddresses) {
  SymbolTable a, b;
  EXPECT_NE(a.parse_kallsyms("not a line\n"), "");
  EXPECT_NE(b.parse_kallsyms("0000000000000000 T x\n0000000000000000 T y\n").find("zero"), std::string::npos);
}

TEST(Symbols, LoadsXzCompressedFiles) {
  ASSERT_EQ(system("command -v xz >/dev/null 2>&1"), 0) << "xz is needed (tools/lab/deps.sh installs xz-utils)";
  char dir[] = "/tmp/kjit-syms-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/kallsyms";
  std::ofstream(path) << kKallsyms;
  ASSERT_EQ(system(("xz -f '" + path + "'").c_str()), 0);
  SymbolTable s;
  EXPECT_EQ(s.load_kallsyms(path + ".xz"), "");
  EXPECT_EQ(s.address_of("__schedule"), 0xffffffff81004000ull);
  SymbolTable missing;
  EXPECT_NE(missing.load_kallsyms(path + ".nope.xz"), "");
  system(("rm -rf '" + std::string(dir) + "'").c_str());
}

// The host function a gate calls; receives host-translated pointers.
uint64_t g_seen[6];
uint64_t record_args(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f) {
  const uint64_t v[6] = {a, b, c, d, e, f};
  memcpy(g_seen, v, sizeof v);
  *reinterpret_cast<uint64_t *>(a) += 1;  // a is a data-window pointer
  return 0x5150;
}

TEST_F(Shim, HostCallGateCallsHostFunctionWithTranslatedPointers) {
  // call gate; ret  -- with rdi = data window exec address
  const uint64_t window = 0xffffffffd0000000ull;
  alignas(4096) static uint8_t data[4096];
  const Capture cap = make_capture({0xe8, 0, 0, 0, 0, 0xc3});
  ShimConfig cfg;
  cfg.capture = &cap;
  cfg.memory.data_host_view = data;
  cfg.memory.data_exec_base = window;
  cfg.memory.data_size = sizeof data;
  shim_configure(cfg);
  const uint64_t fn = reinterpret_cast<uint64_t>(&record_args);
  const uint64_t gate = kjit_os_host_call_gate(fn);
  EXPECT_TRUE(shim_is_gate_address(gate));
  EXPECT_EQ(kjit_os_host_call_gate(fn), gate);  // one gate per function
  EXPECT_NE(kjit_os_host_call_gate(fn + 1), gate);

  Capture patched = cap;
  const int32_t rel = static_cast<int32_t>(gate - (kCode + 5));
  memcpy(&patched.regions[0].bytes[1], &rel, 4);
  patched.regs.gpr[KJIT_REG_RDI] = window + 8;
  patched.regs.gpr[KJIT_REG_RSI] = 77;
  Emulator emu;
  ASSERT_EQ(emu.load_capture(patched), "");
  ASSERT_EQ(emu.map_host(window, data, sizeof data, kPermR | kPermW), "");
  ASSERT_EQ(shim_map_gates(emu), "");
  ASSERT_EQ(emu.map_sentinel(cap.sentinel), "");
  ASSERT_TRUE(emu.push(cap.sentinel));
  const RunResult r = emu.run(kCode, cap.sentinel, 100);
  ASSERT_EQ(r.reason, StopReason::kSentinel) << r.message;
  EXPECT_EQ(g_seen[0], reinterpret_cast<uint64_t>(data + 8));
  EXPECT_EQ(g_seen[1], 77u);
  EXPECT_EQ(data[8], 1);
  EXPECT_EQ(emu.gpr(KJIT_REG_RAX), 0x5150u);
}

TEST_F(Shim, UnallocatedGateFaults) {
  Capture cap = make_capture({0xe8, 0, 0, 0, 0, 0xc3});
  shim_configure(ShimConfig{});
  const int32_t rel = static_cast<int32_t>(kGateBase + kPageSize + 64 - (kCode + 5));
  memcpy(&cap.regions[0].bytes[1], &rel, 4);
  Emulator emu;
  ASSERT_EQ(emu.load_capture(cap), "");
  ASSERT_EQ(shim_map_gates(emu), "");
  ASSERT_EQ(emu.map_sentinel(cap.sentinel), "");
  ASSERT_TRUE(emu.push(cap.sentinel));
  const RunResult r = emu.run(kCode, cap.sentinel, 100);
  EXPECT_EQ(r.reason, StopReason::kFault);
  EXPECT_NE(r.message.find("unallocated"), std::string::npos) << r.message;
}

TEST_F(Shim, LockMisuseIsCountedNotHung) {
  shim_set_quiet(true);
  kjit_os_lock();
  kjit_os_unlock();
  EXPECT_EQ(shim_lock_errors(), 0u);
  kjit_os_lock();
  kjit_os_lock();
  kjit_os_unlock();
  kjit_os_unlock();
  EXPECT_EQ(shim_lock_errors(), 2u);
  EXPECT_EQ(shim_log_lines().size(), 2u);
}

}  // namespace
}  // namespace kjit::sim
