// SPDX-License-Identifier: GPL-2.0
// Replay through sleeps: a function that calls the scheduler funnel twice,
// with the RESUME records a kernel capture would hold (the registers where
// each sleep continued).  Both runs skip the funnel and load them; the
// block sequence and the tools must match the log.  Also: a capture that
// slept without RESUME records says so, and hostile RESUME sections are
// refused.
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
constexpr uint64_t kFunnel = kEntry + 0x1000;  // __schedule: never mapped, never run
constexpr uint64_t kCall1 = kEntry + 6, kRet1 = kEntry + 11;
constexpr uint64_t kCall2 = kEntry + 14, kRet2 = kEntry + 19;
constexpr uint64_t kStackTop = 0xffffc90000010000ull;

std::vector<uint8_t> code() {
  return {
      0x53,                                // push rbx
      0xbb, 0x07, 0x00, 0x00, 0x00,        // mov ebx, 7
      0xe8, 0xf5, 0x0f, 0x00, 0x00,        // call __schedule
      0x48, 0x89, 0xd8,                    // R1: mov rax, rbx
      0xe8, 0xed, 0x0f, 0x00, 0x00,        // call __schedule
      0x48, 0x01, 0xd8,                    // R2: add rax, rbx
      0x5b,                                // pop rbx
      0xc3,                                // ret
  };
}

LoggedResume resume(uint64_t pc, uint64_t ret, uint64_t rax, uint64_t rbx) {
  LoggedResume r;
  r.pc = pc;
  r.target = kFunnel;
  r.ret = ret;
  r.gpr[KJIT_REG_RAX] = rax;
  r.gpr[KJIT_REG_RBX] = rbx;
  r.gpr[KJIT_REG_RSP] = kStackTop - 16;  // the sentinel and rbx pushed, the call returned
  r.rflags = 0x202;
  r.gs_base = 0xffff888077c00000ull;     // another CPU's: the replay keeps its own
  r.cpu = 1;
  return r;
}

// The capture and its log, as kjitctl would write them.
void make(Capture *cap, ReplayLog *log) {
  CaptureBuilder b;
  b.add_region(kEntry, code(), kPermR | kPermX)
      .add_stack(kStackTop, 0x4000)
      .set_gpr(KJIT_REG_RBX, 0x1234)
      .set_gs_base(0xffff888077a00000ull)
      .set_entry(kEntry)
      .set_name("sleeper");
  ASSERT_EQ(b.build(cap), "");
  *log = ReplayLog{};
  log->present = true;
  log->blocks = {{kEntry, 3, 1}, {kRet1, 2, 1}, {kRet2, 3, 0}};
  log->resumes = {resume(kCall1, kRet1, 0xdead, 11), resume(kCall2, kRet2, 11, 4)};
  log->kernel.end = EndReason::kSlept;
  log->symbols = {{kFunnel, "__schedule"}, {kEntry, "sleeper"}};
  put_replay_log(*log, cap);
}

std::string reload(const Capture &cap, ReplayLog *log) {
  std::vector<uint8_t> bytes;
  std::string err = serialize_capture(cap, &bytes);
  Capture again;
  if (err.empty()) err = parse_capture(bytes.data(), bytes.size(), &again);
  if (err.empty()) err = parse_replay_log(again, log);
  return err;
}

bool mentions(const ReplayReport &rep, const std::string &what) {
  for (const std::string &p : rep.problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

TEST(SleepReplay, TwoSleepsReplayExactly) {
  Capture cap;
  ReplayLog log, loaded;
  make(&cap, &log);
  ASSERT_EQ(reload(cap, &loaded), "");
  ASSERT_EQ(loaded.resumes.size(), 2u);
  EXPECT_EQ(loaded.resumes[1].gpr[KJIT_REG_RBX], 4u);
  EXPECT_EQ(loaded.resumes[0].cpu, 1u);
  // The kernel's call trace names the funnel, not the block it returned to.
  EXPECT_EQ(loaded.kernel_call_trace(), (std::vector<uint64_t>{kFunnel, kFunnel}));

  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, loaded, ReplayOptions{}, &rep), "");
  EXPECT_TRUE(rep.ok) << rep.text();
  EXPECT_EQ(rep.original.final_regs.gpr[KJIT_REG_RAX], 15u);    // 11 + 4, from the records
  EXPECT_EQ(rep.original.final_regs.gpr[KJIT_REG_RBX], 0x1234u);  // popped: the stack survived the sleeps
  EXPECT_EQ(rep.original.served.resumes, 2u);
  EXPECT_EQ(rep.reference.instructions, loaded.kernel_icount());
  ASSERT_EQ(rep.translated.size(), 3u);
  for (const ReplayRun &t : rep.translated) {
    EXPECT_EQ(t.served.resumes, 2u) << t.what;
    EXPECT_EQ(t.final_regs.gpr[KJIT_REG_RAX], 15u) << t.what;
  }
  for (const ToolCheck &c : rep.tools) EXPECT_TRUE(c.ok()) << c.tool << ": " << c.kernel << " / " << c.translated;
  EXPECT_NE(rep.text().find("2 sleeps resumed"), std::string::npos);
}

// A capture of a module that did not record RESUME: named, not replayed.
TEST(SleepReplay, SleptWithoutResumeRecordsIsNotReplayable) {
  Capture cap;
  ReplayLog log, loaded;
  make(&cap, &log);
  log.resumes.clear();
  put_replay_log(log, &cap);
  ASSERT_EQ(reload(cap, &loaded), "");
  EXPECT_TRUE(loaded.resumes.empty());
  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, loaded, ReplayOptions{}, &rep), "");
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "slept, not replayable")) << rep.text();
  EXPECT_TRUE(mentions(rep, "no RESUME record left")) << rep.text();
}

// Records that do not fit the run stop it at the sleep, saying why.
TEST(SleepReplay, RecordThatDoesNotFitTheStackIsReported) {
  Capture cap;
  ReplayLog log;
  make(&cap, &log);
  log.resumes[1].gpr[KJIT_REG_RSP] += 8;
  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "RESUME record 1")) << rep.text();

  make(&cap, &log);
  log.resumes.pop_back();  // the second sleep is missing
  ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "no RESUME record left")) << rep.text();
}

// A call the kernel made natively (softirq work on the way out of
// local_bh_enable): the same RESUME record, without a sleep.  Neither run
// executes the callee, whose code is not in the capture; the translated
// runs reach it as native code and continue at the return address.
TEST(SleepReplay, ANativeCallIsSkippedLikeASleep) {
  constexpr uint64_t kSoftirq = kEntry + 0x2000;  // __do_softirq: never mapped, never run
  CaptureBuilder b;
  b.add_region(kEntry,
               {
                   0x53,                          // push rbx
                   0xbb, 0x07, 0x00, 0x00, 0x00,  // mov ebx, 7
                   0xe8, 0xf5, 0x1f, 0x00, 0x00,  // call __do_softirq
                   0x48, 0x01, 0xd8,              // R1: add rax, rbx
                   0x5b,                          // pop rbx
                   0xc3,                          // ret
               },
               kPermR | kPermX)
      .add_stack(kStackTop, 0x4000)
      .set_gpr(KJIT_REG_RBX, 0x1234)
      .set_gs_base(0xffff888077a00000ull)
      .set_entry(kEntry)
      .set_name("bh_enabler");
  Capture cap;
  ASSERT_EQ(b.build(&cap), "");
  ReplayLog log;
  log.present = true;
  log.blocks = {{kEntry, 3, 1}, {kRet1, 3, 0}};
  LoggedResume r = resume(kCall1, kRet1, 0x30, 7);  // rax: what the callee left
  r.target = kSoftirq;
  r.gs_base = 0xffff888077a00000ull;
  r.cpu = 0;
  log.resumes = {r};
  log.kernel.end = EndReason::kReturned;
  log.symbols = {{kFunnel, "__schedule"}, {kSoftirq, "__do_softirq"}, {kEntry, "bh_enabler"}};
  put_replay_log(log, &cap);
  ReplayLog loaded;
  ASSERT_EQ(reload(cap, &loaded), "");
  EXPECT_EQ(loaded.kernel_call_trace(), (std::vector<uint64_t>{kSoftirq}));

  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, loaded, ReplayOptions{}, &rep), "");
  EXPECT_TRUE(rep.ok) << rep.text();
  EXPECT_EQ(rep.original.final_regs.gpr[KJIT_REG_RAX], 0x37u);
  ASSERT_EQ(rep.translated.size(), 3u);
  for (const ReplayRun &t : rep.translated) {
    EXPECT_EQ(t.served.resumes, 1u) << t.what;
    EXPECT_EQ(t.final_regs.gpr[KJIT_REG_RAX], 0x37u) << t.what;
  }
  for (const ToolCheck &c : rep.tools) EXPECT_TRUE(c.ok()) << c.tool << ": " << c.kernel << " / " << c.translated;

  // Without its record the replay stops at the call instead of guessing.
  log.resumes.clear();
  ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
  EXPECT_FALSE(rep.ok);
}

TEST(SleepReplay, HostileResumeSectionsAreRejected) {
  Capture cap;
  ReplayLog log;
  make(&cap, &log);
  auto with = [&](std::vector<uint8_t> payload) {
    Capture c = cap;
    for (RawSection &s : c.extra)
      if (s.type == KJIT_CAPF_RESUME) s.payload = payload;
    ReplayLog l;
    return reload(c, &l);
  };
  std::vector<uint8_t> good;
  for (const RawSection &s : cap.extra)
    if (s.type == KJIT_CAPF_RESUME) good = s.payload;
  ASSERT_EQ(good.size(), 4 + 2 * sizeof(kjit_capf_resume));
  EXPECT_EQ(with(good), "");
  EXPECT_NE(with({3, 0, 0, 0}), "");                                   // count without records
  EXPECT_NE(with(std::vector<uint8_t>(good.begin(), good.end() - 1)), "");  // truncated
  std::vector<uint8_t> bad = good;
  bad[4 + 172] = 1;                                                    // reserved
  EXPECT_NE(with(bad), "");
  bad = good;
  bad[4 + 16] ^= 0x40;                                                 // ret far from the call
  EXPECT_NE(with(bad), "");
  bad = good;
  for (int i = 0; i < 8; i++) bad[4 + 8 + i] = 0;                      // no funnel
  EXPECT_NE(with(bad), "");
  // RESUME alone is not a replay log.
  Capture c = cap;
  std::vector<RawSection> only;
  for (const RawSection &s : c.extra)
    if (s.type == KJIT_CAPF_RESUME) only.push_back(s);
  c.extra = only;
  ReplayLog l;
  EXPECT_NE(reload(c, &l), "");
}

}  // namespace
}  // namespace kjit::sim
