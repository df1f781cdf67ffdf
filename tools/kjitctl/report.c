// SPDX-License-Identifier: GPL-2.0
/* kjitctl report: reading a data file needs DWARF (libdw) and a
 * disassembler (Zydis), which the static kjitctl that runs in guests does
 * not carry; the reader is kjit-report (tools/report/), a sibling executable
 * in the git style: `kjitctl report ARGS` runs `kjit-report ARGS`, found next
 * to kjitctl first, then on PATH.  Its options are kjit-report's. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "kjitctl.h"

int cmd_report(int argc, char **argv)
{
  char self[PATH_MAX], path[PATH_MAX + 16];
  char **av = calloc((size_t)argc + 1, sizeof *av);
  if (!av) return 1;
  av[0] = "kjit-report";
  for (int i = 1; i < argc; i++) av[i] = argv[i];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    snprintf(path, sizeof path, "%s/kjit-report", dirname(self));
    execv(path, av);
  }
  execvp("kjit-report", av);
  fprintf(stderr, "kjitctl report: kjit-report is neither next to %s nor on PATH (it is built with"
                  " kjitctl: cmake --build BUILD --target kjit-report); copy the data file to where"
                  " it is\n", kjitctl_path);
  return 1;
}
