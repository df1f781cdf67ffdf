// SPDX-License-Identifier: GPL-2.0
/* capture_workload NAME [REPS]: sets up, then makes system call NAME (REPS times) (raw
 * syscall(2), no vDSO), for tests/guest/capture-suite.sh.  NAME `all` runs
 * every case once, in the order of `cases` (for kjitctl capture
 * --all-syscalls).  The setup avoids
 * NAME itself where it can, so the first invocation is the interesting one.
 * Cases that block (the capture follows them through the sleep):
 *   read_wait       read() on an empty pipe a child process writes to
 *                   200 ms later (another thread group: the capture's pid
 *                   filter leaves its system calls out)
 *   nanosleep, clock_nanosleep   a 300 ms sleep
 *   futex_wait      FUTEX_WAIT_PRIVATE on a word a thread changes and wakes
 *                   200 ms later (its FUTEX_WAKE is not recorded: the
 *                   capture records one invocation at a time, the wait's)
 * The delays are long because the first repetition also pays for building
 * the instrumented translations under TCG: a 20 ms timer expired before
 * the first nanosleep got to schedule().
 * Prints "NAME = result", and with REPS > 1 the time per repetition after
 * the first tenth (the system call plus its setup; the suite's
 * recording-overhead figure). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/sysinfo.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static char buf[4096];

static void sleep_ms(int ms)
{
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) && errno == EINTR)
    ;
}

/* A child that sleeps `ms`, then writes a byte to `fd`. */
static pid_t write_later(int fd, int ms)
{
  pid_t pid = fork();
  if (pid == 0) {
    sleep_ms(ms);
    _exit(write(fd, "x", 1) == 1 ? 0 : 1);
  }
  return pid;
}

static uint32_t futex_word;

/* A thread that sleeps 200 ms, then sets futex_word and wakes its waiter. */
static void *wake_later(void *arg)
{
  (void)arg;
  sleep_ms(200);
  __atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
  syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  return NULL;
}

/* Every case, for `all`. */
static const char *const cases[] = {
  "getppid", "getpid", "getuid", "umask", "newuname", "read", "write", "pipe2", "openat", "close",
  "newfstat", "lseek", "dup", "fcntl", "ioctl", "brk", "mprotect", "munmap", "kill", "rt_sigaction",
  "rt_sigprocmask", "socket", "getsockname", "sendto", "recvfrom", "poll", "epoll_create1",
  "clock_gettime", "clock_getres", "gettimeofday", "timerfd_create", "timerfd_settime", "getitimer",
  "times", "sysinfo", "getrusage", "getcwd", "read_wait", "nanosleep", "clock_nanosleep", "futex_wait",
};

/* One repetition of case n: its system call's result in *out; 2 for an
 * unknown case, 1 when its setup failed. */
static int run_case(const char *n, long *out)
{
  long r = -1;
  int p[2], s;
  struct sockaddr_in a;
  socklen_t al = sizeof a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!strcmp(n, "getppid")) r = syscall(SYS_getppid);
  else if (!strcmp(n, "getpid")) r = syscall(SYS_getpid);
  else if (!strcmp(n, "getuid")) r = syscall(SYS_getuid);
  else if (!strcmp(n, "umask")) r = syscall(SYS_umask, 022);
  else if (!strcmp(n, "newuname")) { struct utsname u; r = syscall(SYS_uname, &u); }
  else if (!strcmp(n, "read")) {
    syscall(SYS_pipe2, p, 0); syscall(SYS_write, p[1], "hello", 5);
    r = syscall(SYS_read, p[0], buf, sizeof buf);
  } else if (!strcmp(n, "write")) { syscall(SYS_pipe2, p, 0); r = syscall(SYS_write, p[1], "hello", 5); }
  else if (!strcmp(n, "pipe2")) r = syscall(SYS_pipe2, p, O_CLOEXEC);
  else if (!strcmp(n, "openat")) r = syscall(SYS_openat, AT_FDCWD, "/proc/version", O_RDONLY);
  else if (!strcmp(n, "close")) { syscall(SYS_pipe2, p, 0); r = syscall(SYS_close, p[0]); }
  else if (!strcmp(n, "newfstat")) { struct stat st; syscall(SYS_pipe2, p, 0); r = syscall(SYS_fstat, p[0], &st); }
  else if (!strcmp(n, "lseek")) { int fd = open("/proc/version", O_RDONLY); r = syscall(SYS_lseek, fd, 3, SEEK_SET); }
  else if (!strcmp(n, "dup")) { syscall(SYS_pipe2, p, 0); r = syscall(SYS_dup, p[0]); }
  else if (!strcmp(n, "fcntl")) { syscall(SYS_pipe2, p, 0); r = syscall(SYS_fcntl, p[0], F_GETFL); }
  else if (!strcmp(n, "ioctl")) {
    syscall(SYS_pipe2, p, 0); syscall(SYS_write, p[1], "abc", 3); int k = 0;
    r = syscall(SYS_ioctl, p[0], FIONREAD, &k);
  } else if (!strcmp(n, "brk")) r = syscall(SYS_brk, 0);
  else if (!strcmp(n, "mprotect")) {
    void *m = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    r = syscall(SYS_mprotect, m, 4096, PROT_READ);
  } else if (!strcmp(n, "munmap")) {
    void *m = mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    r = syscall(SYS_munmap, m, 4096);
  } else if (!strcmp(n, "kill")) r = syscall(SYS_kill, getpid(), 0);
  else if (!strcmp(n, "rt_sigaction")) {
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    r = syscall(SYS_rt_sigaction, SIGUSR1, NULL, &sa, 8);
  } else if (!strcmp(n, "rt_sigprocmask")) {
    unsigned long old = 0; r = syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &old, 8);
  } else if (!strcmp(n, "socket")) r = syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);
  else if (!strcmp(n, "getsockname")) {
    s = socket(AF_INET, SOCK_DGRAM, 0); bind(s, (void *)&a, sizeof a);
    r = syscall(SYS_getsockname, s, &a, &al);
  } else if (!strcmp(n, "sendto")) {
    s = socket(AF_INET, SOCK_DGRAM, 0); bind(s, (void *)&a, sizeof a); getsockname(s, (void *)&a, &al);
    r = syscall(SYS_sendto, s, "ping", 4, 0, &a, sizeof a);
  } else if (!strcmp(n, "recvfrom")) {
    s = socket(AF_INET, SOCK_DGRAM, 0); bind(s, (void *)&a, sizeof a); getsockname(s, (void *)&a, &al);
    sendto(s, "ping", 4, 0, (void *)&a, sizeof a);
    r = syscall(SYS_recvfrom, s, buf, sizeof buf, MSG_DONTWAIT, NULL, NULL);
  } else if (!strcmp(n, "poll")) {
    syscall(SYS_pipe2, p, 0); syscall(SYS_write, p[1], "x", 1);
    struct pollfd f = {p[0], POLLIN, 0};
    r = syscall(SYS_poll, &f, 1, 0);
  } else if (!strcmp(n, "epoll_create1")) r = syscall(SYS_epoll_create1, 0);
  else if (!strcmp(n, "clock_gettime")) { struct timespec t; r = syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t); }
  else if (!strcmp(n, "clock_getres")) { struct timespec t; r = syscall(SYS_clock_getres, CLOCK_MONOTONIC, &t); }
  else if (!strcmp(n, "gettimeofday")) { struct timeval t; r = syscall(SYS_gettimeofday, &t, NULL); }
  else if (!strcmp(n, "timerfd_create")) r = syscall(SYS_timerfd_create, CLOCK_MONOTONIC, 0);
  else if (!strcmp(n, "timerfd_settime")) {
    int t = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = {{0, 0}, {10, 0}};
    r = syscall(SYS_timerfd_settime, t, 0, &its, NULL);
  } else if (!strcmp(n, "getitimer")) { struct itimerval v; r = syscall(SYS_getitimer, ITIMER_REAL, &v); }
  else if (!strcmp(n, "times")) { struct tms t; r = syscall(SYS_times, &t) != -1; }
  else if (!strcmp(n, "sysinfo")) { struct sysinfo si; r = syscall(SYS_sysinfo, &si); }
  else if (!strcmp(n, "getrusage")) { struct rusage ru; r = syscall(SYS_getrusage, RUSAGE_SELF, &ru); }
  else if (!strcmp(n, "getcwd")) r = syscall(SYS_getcwd, buf, sizeof buf);
  else if (!strcmp(n, "read_wait")) {
    syscall(SYS_pipe2, p, 0);
    pid_t c = write_later(p[1], 200);
    r = syscall(SYS_read, p[0], buf, sizeof buf);
    waitpid(c, NULL, 0); close(p[0]); close(p[1]);
  } else if (!strcmp(n, "nanosleep")) {
    struct timespec t = {0, 300 * 1000000L};
    r = syscall(SYS_nanosleep, &t, NULL);
  } else if (!strcmp(n, "clock_nanosleep")) {
    struct timespec t = {0, 300 * 1000000L};
    r = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &t, NULL);
  } else if (!strcmp(n, "futex_wait")) {
    pthread_t t;
    __atomic_store_n(&futex_word, 0, __ATOMIC_SEQ_CST);
    if (pthread_create(&t, NULL, wake_later, NULL)) return 1;
    r = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    pthread_join(t, NULL);
  } else if (!strcmp(n, "futex_wake")) {
    /* Nobody waits.  Without FUTEX_PRIVATE_FLAG the key comes from the
     * page (get_user_pages_fast), whose protection-key check is rdpkru. */
    r = syscall(SYS_futex, &futex_word, FUTEX_WAKE, 1, NULL, NULL, 0);
  } else if (!strcmp(n, "select_devnull") || !strcmp(n, "pselect6_devnull")) {
    /* bench/micro/lmb.c's select (glibc's select() is pselect6): 100
     * descriptors of /dev/null, which has no poll method, and no timeout. */
    fd_set rs;
    int maxfd = 0;
    FD_ZERO(&rs);
    for (int i = 0; i < 100; i++) {
      int fd = open("/dev/null", O_RDONLY);
      if (fd < 0 || fd >= FD_SETSIZE) { fprintf(stderr, "select_devnull: open\n"); return 2; }
      FD_SET(fd, &rs);
      if (fd > maxfd) maxfd = fd;
    }
    struct timeval tz = {0, 0};
    struct timespec ts = {0, 0};
    r = n[0] == 'p' ? syscall(SYS_pselect6, maxfd + 1, &rs, NULL, NULL, &ts, NULL)
                    : syscall(SYS_select, maxfd + 1, &rs, NULL, NULL, &tz);
    for (int fd = 0; fd <= maxfd; fd++)
      if (FD_ISSET(fd, &rs)) close(fd);
  } else if (!strcmp(n, "statx")) {
    /* A file's attributes: the call tests/guest/capture-suite.sh opens in
     * gdb, held out of the sample captures (not in `all`). */
    r = syscall(SYS_statx, AT_FDCWD, "capture_workload", 0, 0x7ffu /* STATX_BASIC_STATS */, buf);
  } else if (!strcmp(n, "getrandom")) {
    /* The ChaCha block function: straight-line runs longer than the
     * engine's block size limit. */
    r = syscall(SYS_getrandom, buf, 16, 0);
  }
  else { fprintf(stderr, "unknown %s\n", n); return 2; }
  *out = r;
  return 0;
}

int main(int argc, char **argv)
{
  if (argc != 2 && argc != 3) return 2;
  const char *n = argv[1];
  int reps = argc == 3 ? atoi(argv[2]) : 1;
  struct timespec t0, t1;
  long r;
  if (!strcmp(n, "all")) {
    for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
      int rc = run_case(cases[i], &r);
      if (rc) return rc;
      printf("%s = %ld\n", cases[i], r);
    }
    return 0;
  }
  /* The first tenth warms up (TCG translation, kjit's first translation). */
  const int warm = reps / 10;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int rep = 0; rep < reps; rep++) {
    if (rep == warm) clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = run_case(n, &r);
    if (rc) return rc;
    if (rep == 0) printf("%s = %ld\n", n, r);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (reps > 1)
    fprintf(stderr, "time %s: %d reps, %lld ns per rep after %d warm-up reps\n", n, reps - warm,
            ((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)) / (reps - warm), warm);
  return 0;
}
