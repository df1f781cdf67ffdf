// SPDX-License-Identifier: GPL-2.0
// Real kernel captures as seeds: the input is one option byte
// followed by a capture file (tests/data/captures/, written in the guest by
// `kjitctl capture`).  A capture that parses is replayed original vs
// translated under the engine configuration the option byte selects
// (inlining, liveness, chain length); it
// must replay exactly, with every tool equal to the kernel's own result.
// Mutations of the capture itself are mostly refused by its checksums, so
// the fuzzer's freedom is the engine configuration over real kernel code.
#include <cstdint>
#include <cstdio>
#include <string>

#include "capture_file.h"
#include "kjit/engine.h"
#include "replay.h"
#include "replay_log.h"

using namespace kjit::sim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const uint8_t mode = data[0];
  Capture cap;
  if (!parse_capture(data + 1, size - 1, &cap).empty()) return 0;
  ReplayLog log;
  if (!parse_replay_log(cap, &log).empty()) return 0;

  ReplayOptions opt;
  kjit_engine_default_options(&opt.engine);
  opt.engine_set = true;
  opt.engine.inline_instrumentation = !(mode & 1);
  opt.engine.use_liveness = !(mode & 2);
  static const uint32_t kChains[] = {4, 0, 1, 8};
  opt.engine.max_chain_length = kChains[(mode >> 2) & 3];
  ReplayReport rep;
  const std::string err = replay_capture(cap, log, opt, &rep);
  if (!err.empty()) return 0;  // not replayable at all (e.g. no log): not a divergence
  if (!rep.ok) {
    fprintf(stderr, "replay diverged (mode 0x%02x) for %s:\n%s", mode, cap.name.c_str(), rep.text().c_str());
    __builtin_trap();
  }
  return 0;
}
