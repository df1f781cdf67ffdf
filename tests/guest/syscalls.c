// SPDX-License-Identifier: GPL-2.0
/* Guest workload for tests/guest/smoke.sh (static, no libc wrappers for the
 * syscalls under test).  Prints results that must not depend on whether kjit
 * is attached: the same output natively and under kjit is the pass criterion.
 * Usage: syscalls ITERATIONS FILE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

static long sys(long nr, long a, long b, long c, long d)
{
  long r = syscall(nr, a, b, c, d);
  return r < 0 ? -errno : r;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 100;
  const char *file = argc > 2 ? argv[2] : "/proc/self/stat";
  long ppid0 = sys(SYS_getppid, 0, 0, 0, 0), bad_pipe = 0, bad_ppid = 0, bad_fault = 0, bad_noent = 0, bad_open = 0;
  unsigned long sum0 = 0, bad_sum = 0;
  for (int i = 0; i < n; i++) {
    long p = sys(SYS_getppid, 0, 0, 0, 0);
    if (p != ppid0) bad_ppid++;
    long fd = sys(SYS_openat, AT_FDCWD, (long)file, O_RDONLY, 0);
    if (fd < 0) { bad_open++; continue; }
    char buf[512];
    long k = read((int)fd, buf, sizeof buf);
    unsigned long s = 0;
    for (long j = 0; j < k; j++) s = s * 31 + (unsigned char)buf[j];
    if (i == 0) sum0 = s; else if (s != sum0) bad_sum++;
    close((int)fd);
    long e = sys(SYS_openat, AT_FDCWD, 16 /* bad pointer */, O_RDONLY, 0);
    if (e != -EFAULT) bad_fault++;
    e = sys(SYS_openat, AT_FDCWD, (long)"/nonexistent/kjit", O_RDONLY, 0);
    if (e != -ENOENT) bad_noent++;
    /* write/read through a pipe, fstat, uname, bad-pointer read/write */
    int pfd[2];
    if (pipe(pfd) == 0) {
      char msg[64], back[64];
      int len = snprintf(msg, sizeof msg, "kjit-%d", i);
      if (sys(SYS_write, pfd[1], (long)msg, len, 0) != len) bad_pipe++;
      if (sys(SYS_read, pfd[0], (long)back, sizeof back, 0) != len || memcmp(msg, back, len)) bad_pipe++;
      if (sys(SYS_write, pfd[1], 16, 4, 0) != -EFAULT) bad_fault++;
      if (sys(SYS_write, pfd[1], (long)msg, 1, 0) != 1 || sys(SYS_read, pfd[0], 16, 1, 0) != -EFAULT) bad_fault++;
      struct stat st;
      if (sys(SYS_fstat, pfd[0], (long)&st, 0, 0) != 0 || !S_ISFIFO(st.st_mode)) bad_pipe++;
      if (sys(SYS_fstat, pfd[0], 16, 0, 0) != -EFAULT) bad_fault++;
      close(pfd[0]);
      close(pfd[1]);
    } else bad_pipe++;
    struct utsname u;
    if (sys(SYS_uname, (long)&u, 0, 0, 0) != 0 || strcmp(u.sysname, "Linux")) bad_pipe++;
  }
  /* ppid from /proc/self/stat field 4 must equal getppid() */
  long ppid_proc = -1;
  FILE *f = fopen("/proc/self/stat", "r");
  if (f) { if (fscanf(f, "%*d %*s %*c %ld", &ppid_proc) != 1) ppid_proc = -1; fclose(f); }
  if (ppid_proc != ppid0) bad_ppid++;
  printf("ppid_stable %s\n", bad_ppid ? "NO" : "yes");
  printf("open_ok %s\n", bad_open ? "NO" : "yes");
  printf("content_stable %s\n", bad_sum ? "NO" : "yes");
  printf("bad_pointer_efault %s\n", bad_fault ? "NO" : "yes");
  printf("noent_enoent %s\n", bad_noent ? "NO" : "yes");
  printf("pipe_fstat_uname %s\n", bad_pipe ? "NO" : "yes");
  printf("openat_bad_pointer %ld\n", sys(SYS_openat, AT_FDCWD, 16, O_RDONLY, 0));
  return (bad_pipe || bad_ppid || bad_open || bad_sum || bad_fault || bad_noent) ? 1 : 0;
}
