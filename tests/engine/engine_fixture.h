/* SPDX-License-Identifier: GPL-2.0 */
// A live engine over test memory, for the tests of its parts (linker,
// chains, IBL, epochs) and of its API.  The code cache's write view is host
// memory; its exec view is a kernel-like address that the simulator's
// emulated CPU can map onto the same bytes when a test runs the code.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "arch/x86/code_writer.h"
#include "core/engine_state.h"
#include "emulator.h"
#include "engine/test_shim.h"
#include "kjit/engine.h"

namespace kjit::test {

constexpr uint64_t kCodeExec = 0xffffffffc0000000ull;
constexpr uint64_t kCodeBytes = 64 * 1024;   // two 32 KiB epochs: big enough for the IBL
constexpr uint64_t kArenaBytes = 1024 * 1024;  // the inline cache alone takes ~120 KiB a half
// The host's gates: one page right after the cache (rel32 reach).
constexpr uint64_t kGatePage = kCodeExec + kCodeBytes + 0x10000;
constexpr uint64_t kGateDirect = kGatePage;
constexpr uint64_t kGateIndirect = kGatePage + 0x100;
// Original code, within rel32 reach of the cache like kernel text.
constexpr uint64_t kText = 0xffffffff81000000ull;
// The data window (plugin data, kjit_alloc): exec view below the cache.
constexpr uint64_t kDataExec = 0xffffffffb0000000ull;
constexpr uint64_t kDataBytes = 256 * 1024;

struct FreeDeleter {
  void operator()(uint8_t *p) const { free(p); }
};
using HostBuffer = std::unique_ptr<uint8_t, FreeDeleter>;

inline HostBuffer page_buffer(uint64_t bytes) {
  auto *p = static_cast<uint8_t *>(aligned_alloc(4096, bytes));
  memset(p, 0xcc, bytes);
  return HostBuffer(p);
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(init(nullptr), 0); }
  void TearDown() override { kjit_engine_fini(); }

  // (Re)creates the engine; `edit` may change the default options,
  // `edit_mem` the memory handed to it.
  int init(void (*edit)(kjit_engine_options *), uint64_t code_bytes = kCodeBytes,
           void (*edit_mem)(kjit_os_memory *) = nullptr) {
    test_shim_reset();
    kjit_engine_fini();
    code_ = page_buffer(kCodeBytes);
    arena_ = page_buffer(kArenaBytes);
    data_ = page_buffer(kDataBytes);
    kjit_os_memory mem{};
    mem.arena = arena_.get();
    mem.arena_size = kArenaBytes;
    mem.code_write_view = code_.get();
    mem.code_exec_base = kCodeExec;
    mem.code_size = code_bytes;
    mem.data_host_view = data_.get();
    mem.data_exec_base = kDataExec;
    mem.data_size = kDataBytes;
    kjit_os_kernel_facts facts{};
    facts.gate_direct = kGateDirect;
    facts.gate_indirect = kGateIndirect;
    kjit_engine_options opt;
    kjit_engine_default_options(&opt);
    if (edit) edit(&opt);
    if (edit_mem) edit_mem(&mem);
    return kjit_engine_init(&mem, &facts, &opt);
  }

  static Epoch &active() { return g_engine.epoch(); }
  static kjit_engine_stats stats() {
    kjit_engine_stats s;
    kjit_engine_get_stats(&s);
    return s;
  }

  // Host view of cache exec address `exec`.
  uint8_t *host(uint64_t exec) { return code_.get() + (exec - kCodeExec); }

  // Decodes the instruction at cache address `exec` with the engine's own
  // decoder (its branch target is resolved against `exec`).
  x86::Insn decode(uint64_t exec) {
    x86::Insn in{};
    EXPECT_EQ(g_engine.decoder.decode(exec, host(exec), 15, &in), x86::DecodeStatus::kOk)
        << std::hex << exec;
    return in;
  }
  // The first instruction at `exec` that is not padding.
  x86::Insn decode_skipping_nops(uint64_t exec) {
    x86::Insn in = decode(exec);
    while (in.cf == KJIT_CF_NONE && (in.bytes[0] == 0x90 || (in.bytes[0] == 0x66 && in.bytes[1] == 0x90) ||
                                     (in.bytes[0] == 0x0f && in.bytes[1] == 0x1f))) {
      exec += in.length;
      in = decode(exec);
    }
    return in;
  }
  // Past the `mov rcx, [rsp + 8]; pop qword [rsp]` a return site's
  // fallback starts with, or an ABI return site's `mov rcx, [rsp]`, if any.
  uint64_t skip_return_swap(uint64_t exec) {
    static const uint8_t kSwap[] = {0x48, 0x8b, 0x4c, 0x24, 0x08, 0x8f, 0x04, 0x24};
    static const uint8_t kLoad[] = {0x48, 0x8b, 0x0c, 0x24};
    if (std::memcmp(host(exec), kSwap, sizeof(kSwap)) == 0) return exec + sizeof(kSwap);
    return std::memcmp(host(exec), kLoad, sizeof(kLoad)) == 0 ? exec + sizeof(kLoad) : exec;
  }
  // Whether the return site at `exec` is an ABI one: (CS padding, then)
  // `cmp qword [rsp], imm32`.
  bool is_abi_return_site(uint64_t exec) {
    static const uint8_t kCmp[] = {0x48, 0x81, 0x3c, 0x24};
    const uint8_t *p = host(exec);
    while (*p == 0x2e) p++;
    return std::memcmp(p, kCmp, sizeof(kCmp)) == 0;
  }
  // The jmp toward the rest of the chain in the return site at `exec`
  // (indirect_chain.h: after the prologue and the site's own first link).
  uint64_t return_site_tail(uint64_t exec) {
    if (!is_abi_return_site(exec)) {
      EXPECT_EQ(host(exec)[0], 0x51);  // push rcx
    }
    x86::Insn in = decode(exec);
    for (int i = 0; i < 6 && in.cf != KJIT_CF_JMP; i++) in = decode(exec += in.length);
    EXPECT_EQ(in.cf, KJIT_CF_JMP);
    return exec;
  }
  // Where the rel32 jmp/jcc/call at `exec` (after padding) goes.
  uint64_t branch_target(uint64_t exec) { return decode_skipping_nops(exec).target; }

  // Emits with `emit` at the active epoch's free space and claims what it
  // wrote; returns the start's code-region offset.
  template <typename F>
  uint32_t emit(F emit) {
    Epoch &e = active();
    uint32_t start = e.code_used;
    x86::CodeWriter w(e.write_at(start), e.exec_at(start), e.code_size - start);
    emit(w, start);
    EXPECT_FALSE(w.overflowed());
    e.code_used += w.size();
    return start;
  }

  // An emulated CPU that sees the code cache (shared bytes), a stack, and
  // an int3 page at the gates.  Returns nullptr (and fails the test) on error.
  std::unique_ptr<sim::Emulator> emulator() {
    auto emu = std::make_unique<sim::Emulator>();
    EXPECT_TRUE(emu->ok());
    EXPECT_EQ(emu->map_host(kCodeExec, code_.get(), kCodeBytes, sim::kPermR | sim::kPermX), "");
    EXPECT_EQ(emu->map_stack(kStackTop, 0x10000), "");
    EXPECT_EQ(emu->map_sentinel(kGatePage), "");
    return emu;
  }
  // The same CPU, also seeing the data window (what inserted code adds to).
  std::unique_ptr<sim::Emulator> emulator_with_data() {
    auto emu = emulator();
    EXPECT_EQ(emu->map_host(kDataExec, data_.get(), kDataBytes, sim::kPermR | sim::kPermW), "");
    return emu;
  }
  // Enters the translation of `pc` and runs it until an exit stub calls the
  // direct gate (successors are not built).
  void run_to_direct_gate(uint64_t pc) {
    uint64_t exec = kjit_engine_enter(pc);
    ASSERT_TRUE(kjit_engine_is_cache_address(exec)) << std::hex << pc;
    auto emu = emulator_with_data();
    emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
    sim::RunResult r = emu->run(exec, kGateDirect, 200);
    ASSERT_EQ(r.reason, sim::StopReason::kSentinel) << r.message;
  }
  // Runs the translation entered at `exec`, serving the direct gate as the
  // host does, until native code at `native` (no code there: the int3
  // filler); returns eax.
  uint64_t run_to(uint64_t exec, uint64_t native, uint64_t rdi = 0) {
    auto emu = emulator_with_data();  // the departure count at native's trampoline
    EXPECT_EQ(emu->map_sentinel(native), "");
    emu->set_gpr(KJIT_REG_RSP, kStackTop - 0x100);
    emu->set_gpr(KJIT_REG_RAX, 0);
    emu->set_gpr(KJIT_REG_RDI, rdi);
    sim::RunResult r;
    for (int exits = 0; exits < 16; exits++) {  // each through the gate once
      r = emu->run(exec, kGateDirect, 200);
      if (r.reason != sim::StopReason::kSentinel) break;
      uint64_t stub_return = 0, rsp = emu->gpr(KJIT_REG_RSP);
      EXPECT_TRUE(emu->read_u64(rsp, &stub_return));
      emu->set_gpr(KJIT_REG_RSP, rsp + 8);
      exec = kjit_engine_direct_exit(stub_return);
    }
    EXPECT_EQ(r.reason, sim::StopReason::kFault) << r.message;  // the int3 at `native`
    EXPECT_EQ(r.pc, native) << r.message;
    return emu->gpr(KJIT_REG_RAX);
  }

 public:
  static constexpr uint64_t kStackTop = 0x800000;

 protected:
  HostBuffer code_, arena_, data_;
};

}  // namespace kjit::test
