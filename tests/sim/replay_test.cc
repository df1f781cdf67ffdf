// SPDX-License-Identifier: GPL-2.0
// Replay of real kernel captures (tests/data/captures/*.kjitcap, recorded in
// the guest by kjitctl capture; read_wait and futex_wait block and are
// replayed through their sleeps) and the loader's handling of bad files.
#include <dirent.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "capture_file.h"
#include "capture_builder.h"
#include "replay.h"
#include "sample_captures.h"
#include "replay_log.h"

namespace kjit::sim {
namespace {

std::vector<uint8_t> slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Loader + replay-log parser, as kjit-sim replay and the fuzzer use them.
std::string load(const uint8_t *p, size_t n, Capture *cap, ReplayLog *log) {
  std::string err = parse_capture(p, n, cap);
  if (err.empty()) err = parse_replay_log(*cap, log);
  return err;
}

// The same from a file, as kjit-sim replay reads one.
std::string load_file(const std::string &path, Capture *cap, ReplayLog *log) {
  std::string err = load_capture_file(path, cap);
  if (err.empty()) err = parse_replay_log(*cap, log);
  return err;
}

TEST(Replay, SampleCapturesReplayExactly) {
  const auto files = captures();
  ASSERT_GE(files.size(), 3u) << "no sample captures in " << kDir;
  size_t sleeps = 0;
  for (const std::string &f : files) {
    SCOPED_TRACE(f);
    Capture cap;
    ReplayLog log;
    ASSERT_EQ(load_file(f, &cap, &log), "");
    ASSERT_TRUE(log.present);
    if (log.kernel.end == EndReason::kSlept)
      EXPECT_FALSE(log.resumes.empty());
    else
      EXPECT_EQ(log.kernel.end, EndReason::kReturned);
    ReplayReport rep;
    ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
    EXPECT_TRUE(rep.ok) << rep.text();
    ASSERT_EQ(rep.tools.size(), 3u);
    for (const ToolCheck &c : rep.tools) {
      EXPECT_EQ(c.kernel, c.translated) << c.tool;
      EXPECT_EQ(c.original, c.translated) << c.tool;
    }
    EXPECT_EQ(rep.reference.instructions, log.kernel_icount());
    EXPECT_EQ(rep.original.served.reads, log.reads.size());
    EXPECT_EQ(rep.original.served.blocks, log.blocks.size());
    EXPECT_EQ(rep.original.served.resumes, log.resumes.size());
    sleeps += log.resumes.size();
  }
  EXPECT_GE(sleeps, 2u) << "the blocking samples lost their sleeps";
}

// The profile attributes every instruction of each run to one pc (or to
// the engine's routines): its counts add up to the run's, the original's
// only at pcs of the capture's code, and the translated run, which adds a
// transfer's translation to every return at least, somewhere more.
TEST(Replay, ProfileAccountsForEveryInstruction) {
  const auto files = captures();
  ASSERT_GE(files.size(), 1u);
  Capture cap;
  ReplayLog log;
  ASSERT_EQ(load_file(files[0], &cap, &log), "");
  ReplayOptions opt;
  opt.tools = {"none"};
  opt.profile = true;
  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, log, opt, &rep), "");
  ASSERT_TRUE(rep.ok) << rep.text();
  auto sum = [](const ReplayRun &r) {
    uint64_t n = 0;
    for (const auto &[pc, k] : r.insns_at) n += k;
    return n;
  };
  EXPECT_EQ(sum(rep.original), rep.original.insns);
  EXPECT_EQ(rep.original.insns_at.count(ReplayRun::kEngineCode), 0u);
  ASSERT_EQ(rep.translated.size(), 1u);
  EXPECT_EQ(sum(rep.translated[0]), rep.translated[0].insns);
  bool more_somewhere = false;
  for (const auto &[pc, k] : rep.translated[0].insns_at) {
    auto o = rep.original.insns_at.find(pc);
    more_somewhere |= k > (o == rep.original.insns_at.end() ? 0 : o->second);
  }
  EXPECT_TRUE(more_somewhere);
}

// A warm replay runs the translation a first run built: every sample
// replays exactly from it, and with no block left to build it passes
// through no dispatcher gate, so it executes no more instructions than the
// cold run, fewer over all the samples, and fewer engine routines (what
// remains are the gates of sleeps and native calls).  Its trace lists every
// instruction it ran.
TEST(Replay, WarmReplayRunsFromTheCacheItBuilt) {
  const auto files = captures();
  ASSERT_GE(files.size(), 3u);
  uint64_t cold_sum = 0, warm_sum = 0, cold_engine = 0, warm_engine = 0;
  for (const std::string &f : files) {
    SCOPED_TRACE(f);
    Capture cap;
    ReplayLog log;
    ASSERT_EQ(load_file(f, &cap, &log), "");
    ReplayOptions opt;
    opt.tools = {"none"};
    opt.profile = true;
    ReplayReport cold, warm;
    ASSERT_EQ(replay_capture(cap, log, opt, &cold), "");
    opt.warm = opt.trace = true;
    ASSERT_EQ(replay_capture(cap, log, opt, &warm), "");
    ASSERT_TRUE(cold.ok) << cold.text();
    EXPECT_TRUE(warm.ok) << warm.text();
    ASSERT_EQ(warm.translated.size(), 1u);
    const ReplayRun &w = warm.translated[0], &c = cold.translated[0];
    EXPECT_LE(w.insns, c.insns);
    EXPECT_EQ(w.trace.size(), w.insns);
    cold_sum += c.insns;
    warm_sum += w.insns;
    cold_engine += c.insns_at.count(ReplayRun::kEngineCode) ? c.insns_at.at(ReplayRun::kEngineCode) : 0;
    warm_engine += w.insns_at.count(ReplayRun::kEngineCode) ? w.insns_at.at(ReplayRun::kEngineCode) : 0;
  }
  EXPECT_LT(warm_sum, cold_sum);
  EXPECT_LT(warm_engine, cold_engine);
}

// A warm replay's tools count both runs, the one that built the cache and
// the reported one: they are checked against twice the original run's
// counts (a count of one run would mismatch), and the reported run
// executes the instrumented translation without building.
TEST(Replay, WarmToolsCountBothRuns) {
  const auto files = captures();
  ASSERT_GE(files.size(), 3u);
  uint64_t cold_sum = 0, warm_sum = 0;
  for (const std::string &f : files) {
    SCOPED_TRACE(f);
    Capture cap;
    ReplayLog log;
    ASSERT_EQ(load_file(f, &cap, &log), "");
    ReplayOptions opt;  // icount, bbcount, calltrace
    ReplayReport cold, warm;
    ASSERT_EQ(replay_capture(cap, log, opt, &cold), "");
    opt.warm = true;
    ASSERT_EQ(replay_capture(cap, log, opt, &warm), "");
    ASSERT_TRUE(cold.ok) << cold.text();
    EXPECT_TRUE(warm.ok) << warm.text();
    ASSERT_EQ(warm.tools.size(), cold.tools.size());
    for (size_t i = 0; i < warm.tools.size(); i++) {
      SCOPED_TRACE(warm.tools[i].tool);
      EXPECT_EQ(warm.tools[i].original, warm.tools[i].translated);
      EXPECT_TRUE(warm.tools[i].kernel.empty()) << "one invocation's count is no warm replay's";
      if (warm.tools[i].tool == "icount" || warm.tools[i].tool == "bbcount") {
        EXPECT_EQ(std::stoull(warm.tools[i].translated), 2 * std::stoull(cold.tools[i].translated));
      }
    }
    for (size_t i = 0; i < warm.translated.size(); i++) {
      cold_sum += cold.translated[i].insns;
      warm_sum += warm.translated[i].insns;
    }
  }
  EXPECT_LT(warm_sum, cold_sum);
}

// Regression cases for the two that did not replay.  futex_wake (FUTEX_WAKE
// without the private flag: get_user_pages_fast's protection-key check is
// rdpkru, an invalid instruction in Unicorn) replays from its NONDET
// record; getrandom (the ChaCha block function's straight-line runs are
// longer than the engine's block limit, and the file predates BLOCKS' cut
// flag) counts 82 blocks on both sides, not 93.
TEST(Replay, RdpkruAndCutBlocksReplayExactly) {
  struct Case {
    const char *file;
    uint64_t nondets;
    const char *bbcount;
  } cases[] = {{"futex_wake.kjitcap", 1, "110"}, {"getrandom.kjitcap", 0, "82"}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.file);
    Capture cap;
    ReplayLog log;
    ASSERT_EQ(load_capture_file(kDir + "/" + c.file, &cap), "");
    ASSERT_EQ(parse_replay_log(cap, &log), "");
    EXPECT_EQ(log.nondets.size(), c.nondets);
    ReplayReport rep;
    ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
    EXPECT_TRUE(rep.ok) << rep.text();
    EXPECT_EQ(rep.original.served.nondets, c.nondets);
    for (const ToolCheck &c2 : rep.tools) {
      if (c2.tool == "bbcount") {
        EXPECT_EQ(c2.kernel, c.bbcount);
      }
    }
  }
}

// epoll_create1 releases a spinlock twice with no other read between: the
// log holds two READ records of the same `decl %gs:__preempt_count` in a
// row.  Each execution takes its own (2, then 1): served together, the
// first would see 1 and call the scheduler the kernel did not call.
TEST(Replay, OneInstructionRunTwiceTakesOneReadEachTime) {
  Capture cap;
  ReplayLog log;
  ASSERT_EQ(load_capture_file(kDir + "/epoll_create1.kjitcap", &cap), "");
  ASSERT_EQ(parse_replay_log(cap, &log), "");
  size_t repeats = 0;
  for (size_t i = 1; i < log.reads.size(); i++) repeats += log.reads[i].pc == log.reads[i - 1].pc;
  EXPECT_GT(repeats, 0u);
  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
  EXPECT_TRUE(rep.ok) << rep.text();
  EXPECT_EQ(rep.original.served.blocks, log.blocks.size());
}

// A cache too small for the invocation: the engine moves to the other
// epoch and reclaims the old one while the call runs.  Writes made in a
// reclaimed epoch still count as the program's, at their original pcs.
TEST(Replay, WritesSurviveTheReclaimOfTheirEpoch) {
  Capture cap;
  ReplayLog log;
  ASSERT_EQ(load_capture_file(kDir + "/getrandom.kjitcap", &cap), "");
  ASSERT_EQ(parse_replay_log(cap, &log), "");
  ReplayOptions small;
  small.tools = {"icount"};
  small.cache_size = 4 << 10;
  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, log, small, &rep), "");
  EXPECT_TRUE(rep.ok) << rep.text();
  ASSERT_EQ(rep.translated.size(), 1u);
  EXPECT_GT(rep.original.writes.size(), 0u);
  EXPECT_EQ(rep.translated[0].writes.size(), rep.original.writes.size());
  EXPECT_GT(rep.translated[0].flushes, 0u);
  EXPECT_NE(rep.text().find(" cache flushes, "), std::string::npos) << rep.text();
}

// An invocation that ends in a block of only `ret` (personality,
// sched_get_priority_max): no cache pc maps to that block and nothing
// follows it; reaching the sentinel proves it ran.
TEST(Replay, AFinalBlockOfOnlyARetIsMatched) {
  const uint64_t kCode = 0xffffffff81000000ull;
  CaptureBuilder b;
  // mov eax, 1; jmp +0 | ret
  b.add_region(kCode, {0xb8, 0x01, 0x00, 0x00, 0x00, 0xeb, 0x00, 0xc3}, kPermR | kPermX)
      .add_stack(0xffffc90000010000ull, 0x1000)
      .set_entry(kCode);
  Capture cap;
  ASSERT_EQ(b.build(&cap), "");
  ReplayLog log;
  log.present = true;
  log.blocks = {{kCode, 2, 0}, {kCode + 7, 1, 0}};
  log.kernel.end = EndReason::kReturned;
  put_replay_log(log, &cap);
  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
  EXPECT_TRUE(rep.ok) << rep.text();
  for (const ReplayRun &t : rep.translated) EXPECT_EQ(t.served.blocks, 2u) << t.what;
}

// The same futex call captured by a module that did not log rdpkru: the
// result is not in the file, so the replay stops there and says why.
TEST(Replay, AnUnloggedRdpkruIsNamedNotGuessed) {
  Capture cap;
  ReplayLog log;
  ASSERT_EQ(load_capture_file(kDir + "-unlogged/futex-rdpkru.kjitcap", &cap), "");
  ASSERT_EQ(parse_replay_log(cap, &log), "");
  EXPECT_TRUE(log.nondets.empty());
  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
  EXPECT_FALSE(rep.ok);
  ASSERT_FALSE(rep.problems.empty());
  EXPECT_NE(rep.problems[0].find("rdpkru at 0xffffffff812b6731 has a result the replay cannot compute"),
            std::string::npos)
      << rep.text();
}

TEST(Replay, RewrittenCaptureIsIdentical) {
  for (const std::string &f : captures()) {
    const std::vector<uint8_t> bytes = slurp(f);
    Capture cap;
    ReplayLog log;
    ASSERT_EQ(load(bytes.data(), bytes.size(), &cap, &log), "");
    put_replay_log(log, &cap);
    std::vector<uint8_t> again;
    ASSERT_EQ(serialize_capture(cap, &again), "");
    Capture cap2;
    ReplayLog log2;
    ASSERT_EQ(load(again.data(), again.size(), &cap2, &log2), "");
    EXPECT_EQ(log2.reads.size(), log.reads.size());
    EXPECT_EQ(log2.blocks.size(), log.blocks.size());
    EXPECT_EQ(log2.kernel_call_trace(), log.kernel_call_trace());
    EXPECT_EQ(log2.resumes.size(), log.resumes.size());
  }
}

TEST(Replay, EverySingleByteCorruptionIsRejected) {
  const auto files = captures();
  ASSERT_FALSE(files.empty());
  const std::vector<uint8_t> good = slurp(files.front());
  for (size_t i = 0; i < good.size(); i += (i < 4096 ? 1 : 7)) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x5a;
    Capture cap;
    ReplayLog log;
    EXPECT_NE(load(bad.data(), bad.size(), &cap, &log), "") << "byte " << i;
  }
}

TEST(Replay, TruncationIsRejected) {
  const std::vector<uint8_t> good = slurp(captures().front());
  for (size_t n = 0; n < good.size(); n += 97) {
    Capture cap;
    ReplayLog log;
    EXPECT_NE(load(good.data(), n, &cap, &log), "") << "length " << n;
  }
}

// Well-checksummed but hostile replay sections.
TEST(Replay, HostileSectionsAreRejected) {
  const std::vector<uint8_t> good = slurp(captures().front());
  Capture base;
  ReplayLog log;
  ASSERT_EQ(load(good.data(), good.size(), &base, &log), "");
  auto with = [&](uint32_t type, std::vector<uint8_t> payload) {
    Capture c = base;
    for (RawSection &s : c.extra)
      if (s.type == type) s.payload = payload;
    std::vector<uint8_t> bytes;
    EXPECT_EQ(serialize_capture(c, &bytes), "");
    Capture out;
    ReplayLog l;
    return load(bytes.data(), bytes.size(), &out, &l);
  };
  EXPECT_NE(with(0x100, {0xff, 0xff, 0xff, 0xff}), "");        // absurd read count
  EXPECT_NE(with(0x101, {1, 0, 0, 0, 1, 2, 3}), "");           // short NONDET
  EXPECT_NE(with(0x102, {2, 0, 0, 0}), "");                    // BLOCKS count without records
  EXPECT_NE(with(0x103, std::vector<uint8_t>(31, 0)), "");     // KRESULT length
  std::vector<uint8_t> kr(32, 0);
  kr[0] = 9;                                                   // unknown end reason
  EXPECT_NE(with(0x103, kr), "");
  std::vector<uint8_t> rd = {1, 0, 0, 0};                      // one read, size 0
  rd.resize(4 + 32 + 1, 0);
  EXPECT_NE(with(0x100, rd), "");
  // A missing MEMREAD with the others present.
  Capture c = base;
  c.extra.erase(std::remove_if(c.extra.begin(), c.extra.end(), [](const RawSection &s) { return s.type == 0x100; }),
                c.extra.end());
  std::vector<uint8_t> bytes;
  ASSERT_EQ(serialize_capture(c, &bytes), "");
  Capture out;
  ReplayLog l;
  EXPECT_NE(load(bytes.data(), bytes.size(), &out, &l), "");
}

// A log that does not describe the run is noticed: the block sequence.
TEST(Replay, TamperedLogIsDetected) {
  Capture cap;
  ReplayLog log;
  ASSERT_EQ(load_capture_file(captures().front(), &cap), "");
  ASSERT_EQ(parse_replay_log(cap, &log), "");
  ASSERT_GT(log.blocks.size(), 3u);
  log.blocks[2].pc += 1;  // the kernel "ran" a block the replay never enters
  ReplayReport rep;
  ReplayOptions opt;
  opt.tools = {"icount"};
  ASSERT_EQ(replay_capture(cap, log, opt, &rep), "");
  EXPECT_FALSE(rep.ok);
}

// A capture of a sleep from before RESUME records (the section left out):
// loaded, and named as slept and not replayable.
TEST(Replay, SleptCaptureWithoutResumeSectionIsNotReplayable) {
  Capture cap;
  ReplayLog log;
  ASSERT_EQ(load_capture_file(kDir + "/read_wait.kjitcap", &cap), "");
  cap.extra.erase(std::remove_if(cap.extra.begin(), cap.extra.end(),
                                 [](const RawSection &s) { return s.type == KJIT_CAPF_RESUME; }),
                  cap.extra.end());
  std::vector<uint8_t> bytes;
  ASSERT_EQ(serialize_capture(cap, &bytes), "");
  ASSERT_EQ(load(bytes.data(), bytes.size(), &cap, &log), "");
  EXPECT_EQ(log.kernel.end, EndReason::kSlept);
  EXPECT_TRUE(log.resumes.empty());
  ReplayReport rep;
  ASSERT_EQ(replay_capture(cap, log, ReplayOptions{}, &rep), "");
  EXPECT_FALSE(rep.ok);
  ASSERT_FALSE(rep.problems.empty());
  EXPECT_NE(rep.problems.front().find("slept, not replayable"), std::string::npos) << rep.text();
}

// bbcount counts a block the engine's size limit cut together with the
// block that continues it: the kernel-side count leaves the cut one out,
// decided from the code (a capture written before BLOCKS had its cut flag
// counts the same), and from the flag where the code is missing.
TEST(Replay, CutBlocksAreCountedWithTheirContinuation) {
  const uint64_t kCode = 0xffffffff81000000ull;
  CaptureBuilder b;
  // nop; nop | nop; call +0 | ret
  b.add_region(kCode, {0x90, 0x90, 0x90, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3}, kPermR | kPermX)
      .add_stack(0xffffc90000010000ull, 0x1000)
      .set_entry(kCode);
  Capture cap;
  ASSERT_EQ(b.build(&cap), "");
  ReplayLog log;
  log.blocks = {{kCode, 2, 0}, {kCode + 2, 2, 1}, {kCode + 8, 1, 0}};  // no cut flag, as in older files
  EXPECT_EQ(kernel_blocks(cap, log), 2u);
  log.blocks[0].flags = KJIT_CAPF_BLOCK_CUT;
  EXPECT_EQ(kernel_blocks(cap, log), 2u);
  EXPECT_EQ(log.kernel_icount(), 5u);
  EXPECT_EQ(log.kernel_call_trace(), std::vector<uint64_t>{kCode + 8});
  // Code missing: the flag decides.
  log.blocks = {{0x1000, 64, KJIT_CAPF_BLOCK_CUT}, {0x1100, 3, 1}, {0x2000, 2, 0}};
  EXPECT_EQ(kernel_blocks(cap, log), 2u);
}

}  // namespace
}  // namespace kjit::sim
