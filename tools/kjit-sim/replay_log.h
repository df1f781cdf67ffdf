/* SPDX-License-Identifier: GPL-2.0 */
// The replay sections of a capture (format version 2, docs/capture-format.md):
// what a kernel capture recorded besides memory and registers.  Parsed from
// Capture::extra, strictly: a malformed section is an error, never a crash.
#ifndef KJIT_SIM_REPLAY_LOG_H
#define KJIT_SIM_REPLAY_LOG_H

#include <cstdint>
#include <string>
#include <vector>

#include "capture_file.h"
#include "sim_symbols.h"

namespace kjit::sim {

enum class ReplaySection : uint32_t {
  kMemRead = KJIT_CAPF_MEMREAD,
  kNondet = KJIT_CAPF_NONDET,
  kBlocks = KJIT_CAPF_BLOCKS,
  kKernelResult = KJIT_CAPF_KRESULT,
  kSymbols = KJIT_CAPF_SYMBOLS,
  kResume = KJIT_CAPF_RESUME,
};
constexpr uint32_t kFirstReplaySection = KJIT_CAPF_FIRST_REPLAY;
constexpr uint32_t kLastReplaySection = KJIT_CAPF_LAST_REPLAY;

// MEMREAD flags (low 4 bits: segment, 4 = FS, 5 = GS).
enum : uint32_t {
  kReadSegMask = KJIT_CAP_RD_SEG_MASK,
  kReadFailed = KJIT_CAP_RD_FAILED,
  kReadUser = KJIT_CAP_RD_USER,
  kReadString = KJIT_CAP_RD_STRING,
  kReadFlagsMask = KJIT_CAP_RD_FLAGS_MASK,
};
constexpr uint32_t kMaxReadSize = KJIT_CAPF_READ_MAX;

struct LoggedRead {
  uint64_t pc = 0;
  uint64_t addr = 0;  // as the kernel read it (segment base included)
  uint64_t ea = 0;    // without the segment base
  uint32_t flags = 0;
  std::vector<uint8_t> bytes;
  uint32_t segment() const { return flags & kReadSegMask; }
};

struct LoggedNondet {
  uint64_t pc = 0;
  uint64_t dest = 0, rcx = 0, rdx = 0, rbx = 0, rflags = 0;
};

// Where the task continued after its call at `pc` into the scheduler funnel
// `target`: the registers at `ret`, the GS base and CPU then.
struct LoggedResume {
  uint64_t pc = 0, target = 0, ret = 0;
  uint64_t gpr[16] = {};
  uint64_t rflags = 0, gs_base = 0;
  uint32_t cpu = 0;
};

struct LoggedBlock {
  uint64_t pc = 0;
  uint32_t ninsns = 0;
  uint32_t flags = 0;  // bit 0: the block ends in a call; bit 1: cut by the size limit
};

enum class EndReason : uint32_t {
  kNone = 0,
  kReturned = KJIT_CAP_END_RETURNED,
  kOverflow = KJIT_CAP_END_OVERFLOW,
  kLeftCache = KJIT_CAP_END_LEFT_CACHE,
  kStopped = KJIT_CAP_END_STOPPED,
  kSlept = KJIT_CAP_END_SLEPT,
};
const char *end_reason_name(EndReason r);

struct KernelResult {
  EndReason end = EndReason::kNone;
  uint32_t capture_flags = 0;  // bit 0: event buffer overflow, bit 1: code buffer overflow
  uint64_t icount_tool_begin = 0, icount_tool_end = 0;
  uint32_t pid = 0, cpu = 0;
};

struct ReplayLog {
  bool present = false;  // the capture has replay sections at all
  std::vector<LoggedRead> reads;
  std::vector<LoggedNondet> nondets;
  std::vector<LoggedBlock> blocks;
  std::vector<LoggedResume> resumes;  // one per sleep, in order (optional section)
  KernelResult kernel;
  std::vector<SymbolTable::Sym> symbols;

  // What the kernel's tools saw for this invocation, derived from the block
  // sequence (the icount tool adds each block's size when it runs;
  // calltrace logs the block after each call, or the funnel for a call that
  // slept: the block after it is its return).  bbcount's needs the code:
  // kernel_blocks in replay.h.
  uint64_t kernel_icount() const;
  std::vector<uint64_t> kernel_call_trace() const;
};

// Parses the replay sections among cap.extra.  "" or an error naming the
// section and record.  A capture without them gives present = false.
std::string parse_replay_log(const Capture &cap, ReplayLog *out);
// Serialises `log` back into the extra sections of `cap` (replacing any).
void put_replay_log(const ReplayLog &log, Capture *cap);

}  // namespace kjit::sim
#endif
