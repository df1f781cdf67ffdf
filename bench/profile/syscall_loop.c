// SPDX-License-Identifier: GPL-2.0
/* Calls getppid in a loop until the profiler sets kjit_profile_stop (gdb
 * writes it, bench/profile/step_syscall.py) or SECS seconds have passed:
 * the system call that bench/profile/entry-path.sh single-steps through. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile int kjit_profile_stop;

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 10;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!kjit_profile_stop) {
    for (int i = 0; i < 10000; i++) syscall(SYS_getppid);
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > secs) return 1;
  }
  return 0;
}
