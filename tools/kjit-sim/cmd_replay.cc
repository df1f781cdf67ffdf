// SPDX-License-Identifier: GPL-2.0
// kjit-sim replay CAPTURE: re-executes a kernel capture (kjitctl capture)
// with the reads served from its log, original and translated, and checks
// the block sequence, reads, writes, return value and the tools' results
// against the kernel's (replay.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "capture_file.h"
#include "commands.h"
#include "replay.h"
#include "replay_log.h"

namespace kjit::sim {

int cmd_replay(int argc, char **argv) {
  std::string path;
  ReplayOptions opt;
  bool tools_given = false;
  for (int i = 0; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--tool" && i + 1 < argc) {
      if (!tools_given) opt.tools.clear();
      tools_given = true;
      std::stringstream ss(argv[++i]);
      for (std::string t; std::getline(ss, t, ',');) opt.tools.push_back(t);
    } else if (a == "--budget" && i + 1 < argc) {
      opt.budget = strtoull(argv[++i], nullptr, 0);
    } else if (a == "--verbose") {
      opt.quiet = false;
    } else if (a[0] != '-' && path.empty()) {
      path = a;
    } else {
      fprintf(stderr, "replay: unexpected argument %s\n", a.c_str());
      return 2;
    }
  }
  if (path.empty()) {
    fprintf(stderr, "replay: missing CAPTURE\n");
    return 2;
  }
  Capture cap;
  ReplayLog log;
  std::string err = load_capture_file(path, &cap);
  if (err.empty()) {
    err = parse_replay_log(cap, &log);
    if (!err.empty()) err = path + ": " + err;
  }
  ReplayReport rep;
  if (err.empty()) err = replay_capture(cap, log, opt, &rep);
  if (!err.empty()) {
    fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  printf("%s: %s, %zu blocks, %zu reads, %zu nondet, %zu sleeps, kernel end %s\n", path.c_str(), cap.name.c_str(),
         log.blocks.size(), log.reads.size(), log.nondets.size(), log.resumes.size(), end_reason_name(log.kernel.end));
  printf("%s", rep.text().c_str());
  double t = rep.original.seconds;
  uint64_t n = rep.original.insns;
  for (const ReplayRun &r : rep.translated) {
    t += r.seconds;
    n += r.insns;
  }
  printf("summary: %s; %llu kernel insns, %zu blocks, %zu sleeps; replay %.1f ms for %zu runs (%.2f M insns/s)\n",
         rep.ok ? "ok" : "FAILED", static_cast<unsigned long long>(log.kernel_icount()), log.blocks.size(),
         log.resumes.size(), t * 1e3, 1 + rep.translated.size(), t > 0 ? n / t / 1e6 : 0.0);
  return rep.ok ? 0 : 1;
}

}  // namespace kjit::sim
