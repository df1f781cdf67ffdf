// SPDX-License-Identifier: GPL-2.0
// libFuzzer target: the capture loader (os/userspace-sim/capture_file.cc) and the
// replay-log parser (replay_log.cc) on arbitrary bytes.  They must return an
// error or a capture that validates, and a parsed capture must serialise and
// load back to the same log; never crash, hang or read out of bounds (ASan).
// Seeds: fuzz/corpus/fuzz_capture_loader (real kernel captures, one of a
// read that slept: its RESUME section).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "capture_file.h"
#include "replay_log.h"

using namespace kjit::sim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Capture cap;
  if (!parse_capture(data, size, &cap).empty()) return 0;
  if (!validate_capture(cap).empty()) abort();  // accepted but invalid
  ReplayLog log;
  if (!parse_replay_log(cap, &log).empty()) return 0;
  // Round trip: what was accepted is written and read back unchanged.
  if (log.present) put_replay_log(log, &cap);
  std::vector<uint8_t> bytes;
  if (!serialize_capture(cap, &bytes).empty()) abort();
  Capture again;
  ReplayLog log2;
  if (!parse_capture(bytes.data(), bytes.size(), &again).empty()) abort();
  if (!parse_replay_log(again, &log2).empty()) abort();
  if (log2.reads.size() != log.reads.size() || log2.blocks.size() != log.blocks.size() ||
      log2.nondets.size() != log.nondets.size() || log2.resumes.size() != log.resumes.size() ||
      log2.kernel_icount() != log.kernel_icount() || log2.kernel_call_trace() != log.kernel_call_trace())
    abort();
  return 0;
}
