// SPDX-License-Identifier: GPL-2.0
/* Work of SECS seconds with a progress line (progress.h): polled updates
 * for the first half, a blocking phase for the second, then "done" on
 * stdout.  progress.sh runs it on a terminal and off one. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "progress.h"

int main(int argc, char **argv)
{
  double secs = argc > 1 ? atof(argv[1]) : 2.0;
  unsigned steps = (unsigned)(secs * 10);
  progress_begin("probe");
  for (unsigned i = 0; i < steps / 2; i++) {
    progress_update("step %u", i);
    usleep(100000);
  }
  progress_phase("blocking");
  usleep((useconds_t)(steps - steps / 2) * 100000);
  progress_end();
  printf("done\n");
  return 0;
}
