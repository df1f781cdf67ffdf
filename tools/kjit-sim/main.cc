// SPDX-License-Identifier: GPL-2.0
// kjit-sim: replays captured kernel code through the engine in an emulated
// CPU and compares it with the original.
#include <cstdio>
#include <cstring>

#include "commands.h"

namespace {

void usage() {
  fprintf(stderr,
          "usage:\n"
          "  kjit-sim run CAPTURE [--tool NAME] [--no-inline] [--no-liveness]\n"
          "                       [--symbols KALLSYMS[.xz]] [--budget N] [--quiet]\n"
          "      differential run: original vs translated; exit 0 match, 1 divergence, 2 error\n"
          "  kjit-sim replay CAPTURE [--tool NAME[,NAME...]] [--budget N] [--verbose]\n"
          "                       [--profile N] [--trace] [--warm] [--symbols KALLSYMS[.xz]]\n"
          "      replays a kernel capture (kjitctl capture): reads served from its log, original\n"
          "      and translated; checks blocks, writes, rax and tools against the kernel's\n"
          "  kjit-sim info CAPTURE [--symbols KALLSYMS[.xz]] [--log]\n"
          "  kjit-sim sweep --vmlinux FILE --symbols KALLSYMS[.xz] [--limit N] [--verbose]\n"
          "      translate every block of every function of the kernel's .text offline\n"
          "  kjit-sim kernel-diff --vmlinux FILE --symbols KALLSYMS[.xz] [--only FN] [--variants N]\n"
          "      run real kernel functions natively and translated, under every tool\n"
          "      prints the capture's contents\n");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  if (strcmp(argv[1], "run") == 0) return kjit::sim::cmd_run(argc - 2, argv + 2);
  if (strcmp(argv[1], "replay") == 0) return kjit::sim::cmd_replay(argc - 2, argv + 2);
  if (strcmp(argv[1], "info") == 0) return kjit::sim::cmd_info(argc - 2, argv + 2);
  if (strcmp(argv[1], "sweep") == 0) return kjit::sim::cmd_sweep(argc - 2, argv + 2);
  if (strcmp(argv[1], "kernel-diff") == 0) return kjit::sim::cmd_kernel_diff(argc - 2, argv + 2);
  usage();
  return 2;
}
