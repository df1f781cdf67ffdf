// SPDX-License-Identifier: GPL-2.0
/* The workload of tests/guest/record-guest.sh.
 *   record_workload fork N   a child calls uname() N times, the parent
 *                            reads /etc/hostname (openat, read, close) and
 *                            exits with status 7 after the child's exit
 *   record_workload spin S   calls getppid() for S seconds (the process
 *                            a record of someone else must not count)
 *   record_workload busy S   the same with a 1 ms sleep after every 1000
 *                            calls, as a server between requests (the
 *                            process record -p follows)
 *   record_workload badfd N  N read()s of fd -1 (EBADF): a branch of
 *                            ksys_read whose outcome is known
 *   record_workload calls N  N rounds of uname(), getppid(), read(-1) and
 *                            fstat() of its own binary: system calls whose
 *                            kernel paths allocate nothing and take no
 *                            contended lock, so two runs make the same calls
 *                            (the graph test compares callstack with
 *                            calltrace, each on its own run) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  if (argc != 3) { fprintf(stderr, "usage: record_workload fork N | spin SECS | busy SECS | badfd N | calls N\n"); return 2; }
  long n = atol(argv[2]);
  if (!strcmp(argv[1], "fork")) {
    pid_t c = fork();
    if (c == 0) {
      struct utsname u;
      for (long i = 0; i < n; i++) uname(&u);
      _exit(0);
    }
    char buf[256];
    int f = open("/etc/hostname", O_RDONLY);
    if (f < 0 || read(f, buf, sizeof buf) < 0) return 1;
    close(f);
    int st;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st)) return 1;
    return 7;
  }
  if (!strcmp(argv[1], "spin") || !strcmp(argv[1], "busy")) {
    time_t end = time(NULL) + n;
    while (time(NULL) < end) {
      for (int i = 0; i < 1000; i++) getppid();
      if (argv[1][0] == 'b') usleep(1000);
    }
    return 0;
  }
  if (!strcmp(argv[1], "badfd")) {
    char c;
    for (long i = 0; i < n; i++)
      if (read(-1, &c, 1) != -1) return 1;
    return 0;
  }
  if (!strcmp(argv[1], "calls")) {
    /* fstat(2) itself: glibc's fstat() is newfstatat(fd, "", AT_EMPTY_PATH),
     * which copies the empty path into a freshly allocated name. */
    int fd = open("/proc/self/exe", O_RDONLY);
    struct utsname u;
    struct stat st;
    char c;
    if (fd < 0) return 1;
    for (long i = 0; i < n; i++)
      if (uname(&u) || getppid() < 0 || read(-1, &c, 1) != -1 || syscall(SYS_fstat, fd, &st)) return 1;
    return 0;
  }
  return 2;
}
