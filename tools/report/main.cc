// SPDX-License-Identifier: GPL-2.0
// kjit-report: reads a kjit.data file (kjitctl record) and writes one of
// the formats people already open; `kjitctl report` runs it.
//   kjit-report [-i kjit.data] [--vmlinux PATH] [--format F] [-o FILE]
//               [--debug-dir DIR]... [--source-root DIR] [--weight calls|time]
//               [--no-build-id-check]
// Exit status: 0 ok, 1 a file could not be read or does not match, 2 usage.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "data_file.h"
#include "debug_find.h"
#include "debug_images.h"
#include "debug_info.h"
#include "formats.h"
#include "kcov_input.h"
#include "progress.h"
#include "uapi/kjit/ioctl.h"

using namespace kjit::report;

static int usage(FILE *to) {
  fprintf(to,
          "usage: kjitctl report [-i kjit.data] [--vmlinux PATH] [--format F] [-o FILE]\n"
          "  -i, --input FILE       the recording (default kjit.data)\n"
          "      --kcov FILE        instead: PCs a KCOV client printed (first field 0x..., and\n"
          "                         optionally a line \"stext 0x...\"), as blocks; needs --vmlinux\n"
          "  -k, --vmlinux PATH     vmlinux with DWARF; its build id must match.  Default: found from\n"
          "                         the recorded release and build id in /usr/lib/debug/boot/vmlinux-RELEASE\n"
          "                         (Debian: linux-image-RELEASE-dbg), /usr/lib/debug/.build-id/, then\n"
          "                         debuginfod when DEBUGINFOD_URLS is set\n"
          "      --debug-dir DIR    where modules' debug files are (NAME.ko with DWARF anywhere below,\n"
          "                         or DIR/.build-id/); also $KJIT_DEBUG_DIR (colon-separated), the\n"
          "                         vmlinux's modules/ and /usr/lib/debug/lib/modules/RELEASE\n"
          "  -f, --format F         text (default), lcov, drcov, json, annotate FUNC|GLOB,\n"
          "                         graph, folded, perfetto (Chrome trace-event JSON for ui.perfetto.dev),\n"
          "                         latency (bpftrace hist() of call durations and instructions per\n"
          "                         call per function): the last four need -t callstack recordings;\n"
          "                         branches (-t branches recordings)\n"
          "  -o, --output FILE      default stdout\n"
          "      --source-root DIR  lcov: prefix of the source paths (the kernel tree for genhtml)\n"
          "      --weight W         folded: calls (default) or time (self time, ns)\n"
          "      --no-build-id-check  use a vmlinux whose build id differs (addresses may be wrong)\n"
          "exit status: 0 ok, 1 unreadable or mismatched input, 2 usage\n");
  return to == stdout ? 0 : 2;
}

int main(int argc, char **argv) {
  static const option lo[] = {
      {"input", required_argument, nullptr, 'i'}, {"vmlinux", required_argument, nullptr, 'k'},
      {"format", required_argument, nullptr, 'f'}, {"output", required_argument, nullptr, 'o'},
      {"source-root", required_argument, nullptr, 'S'}, {"weight", required_argument, nullptr, 'W'},
      {"no-build-id-check", no_argument, nullptr, 'B'}, {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, 'V'}, {"kcov", required_argument, nullptr, 'K'},
      {"debug-dir", required_argument, nullptr, 'D'},
      {nullptr, 0, nullptr, 0}};
  std::string input = "kjit.data", kcov, vmlinux, format = "text", output, root, weight = "calls", func;
  bool check_id = true;
  DebugSearch search;
  int ch;
  while ((ch = getopt_long(argc, argv, "i:k:f:o:h", lo, nullptr)) != -1) {
    switch (ch) {
      case 'i': input = optarg; break;
      case 'k': vmlinux = optarg; break;
      case 'f': format = optarg; break;
      case 'o': output = optarg; break;
      case 'S': root = optarg; if (!root.empty() && root.back() != '/') root += '/'; break;
      case 'W': weight = optarg; break;
      case 'B': check_id = false; break;
      case 'K': kcov = optarg; break;
      case 'D': search.dirs.push_back(optarg); break;
      case 'h': return usage(stdout);
      case 'V': printf("kjit-report %s (data format %u)\n", KJIT_VERSION, KJIT_DATA_VERSION); return 0;
      default: return usage(stderr);
    }
  }
  if (format == "annotate") {
    if (optind >= argc) { fprintf(stderr, "kjit-report: --format annotate FUNC\n"); return 2; }
    func = argv[optind++];
  }
  if (optind < argc) { fprintf(stderr, "kjit-report: unexpected %s\n", argv[optind]); return usage(stderr); }
  static const char *const formats[] = {"text", "lcov", "drcov", "json", "annotate", "graph", "folded", "branches",
                                          "perfetto", "latency"};
  bool known = false;
  for (const char *f : formats) known |= format == f;
  if (!known) { fprintf(stderr, "kjit-report: unknown format %s\n", format.c_str()); return usage(stderr); }

  Recording rec;
  std::string err;
  DebugInfo dbg;
  // A line on a terminal's stderr while a big recording or a vmlinux's
  // DWARF is read (progress.h); erased before anything else is said.
  progress_begin("kjitctl report");
  progress_phase("reading %s", kcov.empty() ? input.c_str() : kcov.c_str());
  struct ProgressEnd { ~ProgressEnd() { progress_end(); } } progress_end_at_return;
  if (!kcov.empty()) {
    if (vmlinux.empty()) { fprintf(stderr, "kjit-report: --kcov needs --vmlinux (blocks are read from it)\n"); return 2; }
    if (!dbg.open(vmlinux, err) || !recording_from_kcov(kcov, dbg, rec, err)) {
      fprintf(stderr, "kjit-report: %s\n", err.c_str());
      return 1;
    }
  } else if (!read_recording(input, rec, err)) {
    fprintf(stderr, "kjit-report: %s\n", err.c_str());
    return 1;
  }
  if (vmlinux.empty()) {
    // Not told: the recorded kernel's debug info where Debian, the
    // build-id tree or debuginfod has it (debug_find.h).
    progress_clear();
    if (find_vmlinux(rec.meta["kernel_release"], rec.meta["build_id"], vmlinux, err))
      fprintf(stderr, "kjit-report: debug info: %s\n", vmlinux.c_str());
    else
      fprintf(stderr, "kjit-report: %s; reporting without file:line\n", err.c_str());
  }
  int64_t slide = 0;
  if (!vmlinux.empty()) {
    progress_phase("reading debug info %s", vmlinux.c_str());
    if (kcov.empty() && !dbg.open(vmlinux, err)) { fprintf(stderr, "kjit-report: %s\n", err.c_str()); return 1; }
    const std::string &want = rec.meta["build_id"];
    if (check_id && !want.empty() && dbg.build_id() != want) {
      fprintf(stderr, "kjit-report: %s is not the recorded kernel: build id %s, the recording's is %s"
                      " (kernel %s; --no-build-id-check to use it anyway)\n", vmlinux.c_str(),
              dbg.build_id().empty() ? "(none)" : dbg.build_id().c_str(), want.c_str(),
              rec.meta["kernel_release"].c_str());
      return 1;
    }
    slide = (int64_t)(rec.stext - dbg.stext());
  }
  FILE *out = stdout;
  if (!output.empty() && !(out = fopen(output.c_str(), "w"))) {
    fprintf(stderr, "kjit-report: %s: %s\n", output.c_str(), strerror(errno));
    return 1;
  }
  if (const char *env = getenv("KJIT_DEBUG_DIR"))
    for (std::string s = env; !s.empty();) {
      size_t colon = s.find(':');
      if (colon) search.dirs.push_back(s.substr(0, colon));
      s = colon == std::string::npos ? "" : s.substr(colon + 1);
    }
  if (!vmlinux.empty()) {
    size_t slash = vmlinux.rfind('/');
    search.vmlinux_dir = slash == std::string::npos ? "." : vmlinux.substr(0, slash);
  }
  search.check_build_id = check_id;
  DebugImages images(rec, vmlinux.empty() ? nullptr : &dbg, slide, search);
  Context c{rec, images.any() ? &images : nullptr, root, weight, out};
  progress_phase("writing %s", format.c_str());
  int rc = format == "text"     ? format_text(c)
           : format == "lcov"   ? format_lcov(c)
           : format == "drcov"  ? format_drcov(c)
           : format == "json"   ? format_json(c)
           : format == "graph"  ? format_graph(c)
           : format == "folded" ? format_folded(c)
           : format == "branches" ? format_branches(c)
           : format == "perfetto" ? format_perfetto(c)
           : format == "latency" ? format_latency(c)
                                : format_annotate(c, func);
  if (out != stdout && fclose(out)) { fprintf(stderr, "kjit-report: %s: write error\n", output.c_str()); return 1; }
  return rc;
}
