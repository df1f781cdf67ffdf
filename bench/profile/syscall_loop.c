// SPDX-License-Identifier: GPL-2.0
/* Makes one system call in a loop until the profiler sets kjit_profile_stop
 * (gdb writes it, bench/profile/step_syscall.py) or SECS seconds have
 * passed: the system call that bench/profile/entry-path.sh single-steps
 * through.  Usage: loop SECS [CALL [cold]]; CALL is getppid (the default)
 * or pselect6, bench/micro/lmb.c's select (glibc's select() makes
 * pselect6) on 100 descriptors of /dev/null with no timeout.  cold: kjit's
 * cache is flushed (KJIT_IOC_FLUSH, an ioctl the profiler lets pass)
 * before every call, so that each call builds what it runs. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uapi/kjit/ioctl.h"

volatile int kjit_profile_stop;

static fd_set sel_set;
static int sel_max;

static void one_call(int pselect)
{
  if (!pselect) {
    syscall(SYS_getppid);
    return;
  }
  fd_set r = sel_set;
  struct timespec ts = {0, 0};
  syscall(SYS_pselect6, sel_max + 1, &r, NULL, NULL, &ts, NULL);
}

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 10;
  int pselect = argc > 2 && !strcmp(argv[2], "pselect6");
  if (argc > 2 && !pselect && strcmp(argv[2], "getppid")) return 2;
  int kjit = -1;
  if (argc > 3) {
    if (strcmp(argv[3], "cold") || (kjit = open("/dev/kjit", O_RDWR)) < 0) return 2;
  }
  if (pselect) {
    FD_ZERO(&sel_set);
    for (int i = 0; i < 100; i++) {
      int fd = open("/dev/null", O_RDONLY);
      if (fd < 0 || fd >= FD_SETSIZE) return 2;
      FD_SET(fd, &sel_set);
      if (fd > sel_max) sel_max = fd;
    }
  }
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!kjit_profile_stop) {
    for (int i = 0; i < (pselect ? 100 : 10000); i++) {
      if (kjit >= 0 && ioctl(kjit, KJIT_IOC_FLUSH, 0) < 0) return 2;
      one_call(pselect);
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > secs) return 1;
  }
  return 0;
}
