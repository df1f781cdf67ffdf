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
          "  kjit-sim replay CAPTURE --gdb [HOST:]PORT [--translated] [--vmlinux FILE]\n"
          "                       [--checkpoint-every N] [--budget N] [--symbols KALLSYMS[.xz]]\n"
          "      serves the replay to gdb (remote protocol), forward and backward; prints the\n"
          "      gdb command line that loads the debug vmlinux at the capture's addresses\n"
          "  kjit-sim info CAPTURE [--symbols KALLSYMS[.xz]] [--log]\n"
          "      prints the capture's contents\n"
          "  kjit-sim sweep --vmlinux FILE --symbols KALLSYMS[.xz] [--limit N] [--verbose]\n"
          "      translate every block of every function of the kernel's .text offline\n"
          "  kjit-sim kernel-diff --vmlinux FILE --symbols KALLSYMS[.xz] [--only FN] [--variants N]\n"
          "      run real kernel functions natively and translated, under every tool\n");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  // Each gets its name and the arguments after it (argv[0]: "kjit-sim
  // NAME", which getopt's messages start with).
  const char *cmd = argv[1];
  static char name[64];
  snprintf(name, sizeof name, "kjit-sim %s", cmd);
  argv[1] = name;
  if (strcmp(cmd, "run") == 0) return kjit::sim::cmd_run(argc - 1, argv + 1);
  if (strcmp(cmd, "replay") == 0) return kjit::sim::cmd_replay(argc - 1, argv + 1);
  if (strcmp(cmd, "info") == 0) return kjit::sim::cmd_info(argc - 1, argv + 1);
  if (strcmp(cmd, "sweep") == 0) return kjit::sim::cmd_sweep(argc - 1, argv + 1);
  if (strcmp(cmd, "kernel-diff") == 0) return kjit::sim::cmd_kernel_diff(argc - 1, argv + 1);
  usage();
  return 2;
}
