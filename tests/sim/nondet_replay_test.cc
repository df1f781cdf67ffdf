// SPDX-License-Identifier: GPL-2.0
// Replay of non-deterministic instructions, one test per kind of
// kjit_insn_nondet_kind (include/kjit/plugin.h): a function that executes
// them, with the NONDET (and MEMREAD) records a kernel capture holds for it
// (what kjit.ko's capture logs after each one: the registers and flags).
// Both runs skip the instruction and load the record, so the result is the
// kernel's even where Unicorn computes another value or none (rdpkru is an
// invalid instruction there; mov to cr3 would change its paging).  A record
// that is missing stops the replay and names the instruction.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capture_file.h"
#include "capture_builder.h"
#include "replay.h"
#include "replay_log.h"

namespace kjit::sim {
namespace {

constexpr uint64_t kEntry = 0xffffffff81000000ull;
constexpr uint64_t kStackTop = 0xffffc90000010000ull;
constexpr uint64_t kBuf = kStackTop - 0x800;  // rdi: memory operands point here
constexpr uint64_t kRbx = 0x1234, kRcx = 0, kRdx = 0x40;
constexpr uint64_t kFlags = 0x202;           // IF, ZF clear
constexpr uint64_t kZF = 0x40, kCF = 0x1;

struct Insn {
  std::vector<uint8_t> bytes;
  bool nondet;
};

// One block: the instructions, then ret.  Records for the nondet ones come
// from `records` in order (their pc filled in here).
struct Program {
  std::vector<Insn> insns;
  std::vector<LoggedNondet> records;
  std::vector<LoggedRead> reads;  // pc = index of the instruction (filled in)
};

void build(const Program &p, Capture *cap, ReplayLog *log) {
  std::vector<uint8_t> code;
  std::vector<uint64_t> pcs;
  for (const Insn &i : p.insns) {
    pcs.push_back(kEntry + code.size());
    code.insert(code.end(), i.bytes.begin(), i.bytes.end());
  }
  code.push_back(0xc3);
  CaptureBuilder b;
  b.add_region(kEntry, code, kPermR | kPermX)
      .add_stack(kStackTop, 0x4000)
      .set_gpr(KJIT_REG_RBX, kRbx)
      .set_gpr(KJIT_REG_RCX, kRcx)
      .set_gpr(KJIT_REG_RDX, kRdx)
      .set_gpr(KJIT_REG_RDI, kBuf)
      .set_rflags(kFlags)
      .set_entry(kEntry)
      .set_name("nondet");
  ASSERT_EQ(b.build(cap), "");
  *log = ReplayLog{};
  log->present = true;
  log->blocks = {{kEntry, static_cast<uint32_t>(p.insns.size() + 1), 0}};
  size_t r = 0;
  for (size_t i = 0; i < p.insns.size(); i++) {
    if (!p.insns[i].nondet) continue;
    ASSERT_LT(r, p.records.size());
    LoggedNondet n = p.records[r++];
    n.pc = pcs[i];
    log->nondets.push_back(n);
  }
  ASSERT_EQ(r, p.records.size());
  for (LoggedRead rd : p.reads) {
    rd.pc = pcs[rd.pc];
    log->reads.push_back(rd);
  }
  log->kernel.end = EndReason::kReturned;
  put_replay_log(*log, cap);
}

// The registers after an instruction that writes `dest` (rax when none) and
// perhaps rcx/rdx/rbx, as the capture logs them.
LoggedNondet after(uint64_t dest, uint64_t rflags = kFlags, uint64_t rcx = kRcx, uint64_t rdx = kRdx,
                   uint64_t rbx = kRbx) {
  LoggedNondet n;
  n.dest = dest;
  n.rcx = rcx;
  n.rdx = rdx;
  n.rbx = rbx;
  n.rflags = rflags;
  return n;
}

// Replays through a file round trip; every run must match the log.
ReplayReport replay(const Program &p) {
  Capture cap;
  ReplayLog log, loaded;
  build(p, &cap, &log);
  std::vector<uint8_t> bytes;
  EXPECT_EQ(serialize_capture(cap, &bytes), "");
  Capture again;
  EXPECT_EQ(parse_capture(bytes.data(), bytes.size(), &again), "");
  EXPECT_EQ(parse_replay_log(again, &loaded), "");
  EXPECT_EQ(loaded.nondets.size(), log.nondets.size());
  ReplayReport rep;
  EXPECT_EQ(replay_capture(again, loaded, ReplayOptions{}, &rep), "");
  return rep;
}

// Every run (original, and translated under each tool) ended with `reg`
// = `value` and used every record.
void expect_all_runs(const ReplayReport &rep, int reg, uint64_t value, size_t records) {
  EXPECT_TRUE(rep.ok) << rep.text();
  EXPECT_EQ(rep.original.final_regs.gpr[reg], value);
  EXPECT_EQ(rep.original.served.nondets, records);
  ASSERT_FALSE(rep.translated.empty());
  for (const ReplayRun &t : rep.translated) {
    EXPECT_EQ(t.final_regs.gpr[reg], value) << t.what;
    EXPECT_EQ(t.served.nondets, records) << t.what;
  }
}

TEST(NondetReplay, RegisterResultsAreTheKernels) {
  struct Case {
    const char *what;
    std::vector<uint8_t> bytes;
    int reg;
    LoggedNondet rec;
    uint64_t value;
  } cases[] = {
      {"rdpkru", {0x0f, 0x01, 0xee}, KJIT_REG_RAX, after(0x55555554, kFlags, 0, 0), 0x55555554},
      {"rdpkru (rdx zeroed)", {0x0f, 0x01, 0xee}, KJIT_REG_RDX, after(0x55555554, kFlags, 0, 0), 0},
      {"xgetbv", {0x0f, 0x01, 0xd0}, KJIT_REG_RDX, after(0x2e7, kFlags, kRcx, 0x0), 0},
      {"rdtscp", {0x0f, 0x01, 0xf9}, KJIT_REG_RCX, after(0x9abcdef0, kFlags, 1, 0x12345678), 1},
      {"cpuid", {0x0f, 0xa2}, KJIT_REG_RBX, after(0xd, kFlags, 0x6c65746e, 0x49656e69, 0x756e6547), 0x756e6547},
      {"rdrand r9", {0x49, 0x0f, 0xc7, 0xf1}, KJIT_REG_R9, after(0xfeedface, kFlags | kCF), 0xfeedface},
      {"rdfsbase r10", {0xf3, 0x49, 0x0f, 0xae, 0xc2}, KJIT_REG_R10, after(0x7f0000001000), 0x7f0000001000},
      {"rdpid rsi", {0xf3, 0x0f, 0xc7, 0xfe}, KJIT_REG_RSI, after(1), 1},
      {"lsl eax, ecx", {0x0f, 0x03, 0xc1}, KJIT_REG_RAX, after(0x1f, kFlags | kZF), 0x1f},
      {"lar rsi, rdi", {0x48, 0x0f, 0x02, 0xf7}, KJIT_REG_RSI, after(0xcf9300, kFlags | kZF), 0xcf9300},
      {"str eax", {0x0f, 0x00, 0xc8}, KJIT_REG_RAX, after(0x40), 0x40},
      {"smsw eax", {0x0f, 0x01, 0xe0}, KJIT_REG_RAX, after(0x80050033), 0x80050033},
      {"mov rax, cr3", {0x0f, 0x20, 0xd8}, KJIT_REG_RAX, after(0x10a5e000), 0x10a5e000},
      {"mov r11, cr4", {0x41, 0x0f, 0x20, 0xe3}, KJIT_REG_R11, after(0x3506f0), 0x3506f0},
      {"mov eax, ds", {0x8c, 0xd8}, KJIT_REG_RAX, after(0x2b), 0x2b},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    Program p;
    p.insns = {{c.bytes, true}};
    p.records = {c.rec};
    expect_all_runs(replay(p), c.reg, c.value, 1);
  }
}

TEST(NondetReplay, FlagResultsAreTheKernels) {
  for (uint64_t zf : {uint64_t{0}, kZF}) {
    SCOPED_TRACE(zf ? "ZF set" : "ZF clear");
    Program p;
    // xor eax, eax; verr cx; setz al
    p.insns = {{{0x31, 0xc0}, false}, {{0x0f, 0x00, 0xe1}, true}, {{0x0f, 0x94, 0xc0}, false}};
    p.records = {after(0, kFlags | zf)};
    expect_all_runs(replay(p), KJIT_REG_RAX, zf ? 1 : 0, 1);
  }
}

// A read-modify-write of per-CPU memory (this_cpu_dec of preempt_count)
// is logged before it runs; an interrupt in between can change the word
// (the resched IPI clears the need-resched bit), and the capture then logs
// the flags the instruction really left.  Both runs execute it on the
// logged value and take the record's flags, whichever way they differ.
TEST(NondetReplay, FlagsLoggedAfterAPerCpuReadAreTheKernels) {
  struct Case {
    const char *what;
    uint32_t logged;
    uint64_t kernel_flags;
    uint64_t setz;
  } cases[] = {
      {"the word lost need-resched after the READ: zero", 0x80000001u, kFlags | kZF, 1},
      {"the word gained a count after the READ: not zero", 0x00000001u, kFlags, 0},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    Program p;
    // xor eax, eax; dec dword [rdi]; setz al
    p.insns = {{{0x31, 0xc0}, false}, {{0xff, 0x0f}, true}, {{0x0f, 0x94, 0xc0}, false}};
    p.records = {after(0, c.kernel_flags, 0, 0, 0)};
    LoggedRead rd;
    rd.pc = 1;
    rd.addr = rd.ea = kBuf;
    for (int i = 0; i < 4; i++) rd.bytes.push_back(static_cast<uint8_t>(c.logged >> (8 * i)));
    p.reads = {rd};
    const ReplayReport rep = replay(p);
    expect_all_runs(rep, KJIT_REG_RAX, c.setz, 1);
    EXPECT_EQ(rep.original.served.reads, 1u);
  }
}

// sgdt's memory result is not logged: the load of it that follows is a
// MEMREAD, served like any other.
TEST(NondetReplay, MemoryResultsReachLaterReadsThroughTheReadLog) {
  const uint64_t gdt = 0xfffffe0000001000ull;
  Program p;
  // mov rax, 7; sgdt [rdi]; mov rax, [rdi+2]
  p.insns = {{{0x48, 0xc7, 0xc0, 0x07, 0x00, 0x00, 0x00}, false},
             {{0x0f, 0x01, 0x07}, true},
             {{0x48, 0x8b, 0x47, 0x02}, false}};
  p.records = {after(7)};
  LoggedRead rd;
  rd.pc = 2;  // the third instruction
  rd.addr = rd.ea = kBuf + 2;
  for (int i = 0; i < 8; i++) rd.bytes.push_back(static_cast<uint8_t>(gdt >> (8 * i)));
  p.reads = {rd};
  const ReplayReport rep = replay(p);
  expect_all_runs(rep, KJIT_REG_RAX, gdt, 1);
  EXPECT_EQ(rep.original.served.reads, 1u);
}

// Machine state the replay does not model: skipped, the registers as they were.
TEST(NondetReplay, SideEffectsAreSkipped) {
  Program p;
  // mov cr3, rax; wrmsr; out dx, al; invlpg [rdi]; mov ds, eax; wbinvd; mov eax, 7
  p.insns = {{{0x0f, 0x22, 0xd8}, true}, {{0x0f, 0x30}, true},        {{0xee}, true},
             {{0x0f, 0x01, 0x3f}, true}, {{0x8e, 0xd8}, true},        {{0x0f, 0x09}, true},
             {{0xb8, 0x07, 0x00, 0x00, 0x00}, false}};
  p.records = {after(0), after(0), after(0), after(0), after(0), after(0)};
  expect_all_runs(replay(p), KJIT_REG_RAX, 7, 6);
}

// A capture from a module that did not log the instruction: the replay
// stops there and names it, it does not run on with Unicorn's idea of it.
TEST(NondetReplay, AMissingRecordIsNamed) {
  Program p;
  p.insns = {{{0x31, 0xc9}, false}, {{0x0f, 0x01, 0xee}, false}};  // xor ecx, ecx; rdpkru (not logged)
  const ReplayReport rep = replay(p);
  EXPECT_FALSE(rep.ok);
  bool named = false;
  for (const std::string &s : rep.problems)
    named |= s.find("rdpkru at 0xffffffff81000002") != std::string::npos &&
             s.find("logged none") != std::string::npos;
  EXPECT_TRUE(named) << rep.text();
}

}  // namespace
}  // namespace kjit::sim
