// SPDX-License-Identifier: GPL-2.0
/* broad_workload: one run makes well over 130 distinct system calls across
 * processes, files and directories, memory, IPC, sockets, time, signals,
 * polling and blocking calls, for `kjitctl capture --all-syscalls`
 * (tests/guest/capture-suite.sh).  Deterministic; a few seconds in a TCG
 * guest; runs as root with cwd writable (its scratch directory bw.tmp is
 * removed at the end).  Every return value is checked: an unexpected error
 * prints "broad_workload: FAIL <call>: <errno>" and the exit status is 1; a
 * call the kernel does not offer (ENOSYS and the like) prints
 * "broad_workload: skip <call>".  Raw syscall(2) where libc would pick
 * another system call.
 *
 * The capture records one invocation at a time and keeps the first
 * complete invocation of each system call, so the order matters: the
 * blocking calls come first (the first read is a read on an empty pipe a
 * child writes to, the first futex a FUTEX_WAIT a thread wakes, the first
 * wait4 waits for a sleeping child, the first nanosleep sleeps), and the
 * calls only a child can make (setsid, execve, the exec'd image's) come
 * after wait4 has been recorded once, so the parent waiting in wait4 does
 * not hold the capture while its child runs.
 *
 *   broad_workload            the whole run
 *   broad_workload exec-child what the exec'd child does (execve, execveat) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/futex.h>
#include <linux/kcmp.h>
#include <linux/membarrier.h>
#include <linux/openat2.h>
#include <mqueue.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/sendfile.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/times.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static int failures;
static char buf[8192];

/* r == -1 is an unexpected error. */
static long ck(long r, const char *what)
{
  if (r == -1) {
    printf("broad_workload: FAIL %s: %s\n", what, strerror(errno));
    fflush(stdout);
    failures++;
  }
  return r;
}

/* r == -1 with errno ENOSYS, EOPNOTSUPP, EPERM or EINVAL (a feature the
 * kernel or its configuration lacks) is a skip; other errors fail. */
static long opt(long r, const char *what)
{
  if (r == -1 && (errno == ENOSYS || errno == EOPNOTSUPP || errno == EPERM || errno == EINVAL ||
                  errno == ENOSPC)) {
    printf("broad_workload: skip %s: %s\n", what, strerror(errno));
    return r;
  }
  return ck(r, what);
}

/* A check of a value, not of a return code. */
static void expect(int ok, const char *what)
{
  if (!ok) {
    printf("broad_workload: FAIL %s: unexpected result\n", what);
    fflush(stdout);
    failures++;
  }
}

static void sleep_ms(int ms)
{
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (syscall(SYS_nanosleep, &t, &t) == -1 && errno == EINTR)
    ;
}

static int wait_child(pid_t pid, const char *what)
{
  int st = 0;
  ck(syscall(SYS_wait4, pid, &st, 0, NULL), what);
  expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, what);
  return st;
}

/* ---- blocking calls (first, see the top) ------------------------------ */

static uint32_t futex_word;

static void *futex_waker(void *arg)
{
  (void)arg;
  sleep_ms(100);
  __atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
  syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  return NULL;
}

static void blocking(void)
{
  int p[2];
  pid_t c;

  /* wait4 on a child that is still asleep */
  c = fork();
  if (c == 0) {
    sleep_ms(100);
    _exit(0);
  }
  ck(c, "fork");
  wait_child(c, "wait4 (blocking)");

  /* read on an empty pipe that a child writes to */
  ck(syscall(SYS_pipe2, p, O_CLOEXEC), "pipe2");
  c = fork();
  if (c == 0) {
    sleep_ms(100);
    _exit(write(p[1], "w", 1) == 1 ? 0 : 1);
  }
  ck(c, "fork");
  expect(ck(syscall(SYS_read, p[0], buf, 1), "read (blocking)") == 1, "read (blocking)");
  wait_child(c, "wait4");
  close(p[0]);
  close(p[1]);

  /* FUTEX_WAIT woken by a thread */
  pthread_t t;
  __atomic_store_n(&futex_word, 0, __ATOMIC_SEQ_CST);
  expect(pthread_create(&t, NULL, futex_waker, NULL) == 0, "pthread_create (clone3)");
  while (__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST) == 0) {
    long r = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    if (r == -1 && errno != EAGAIN && errno != EINTR) ck(r, "futex wait");
  }
  expect(pthread_join(t, NULL) == 0, "pthread_join");

  /* sleeps */
  struct timespec ts = {0, 30 * 1000000L};
  ck(syscall(SYS_nanosleep, &ts, NULL), "nanosleep");
  ck(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL), "clock_nanosleep");
}

/* ---- processes -------------------------------------------------------- */

static void processes(const char *self)
{
  pid_t c;
  int st;

  ck(syscall(SYS_getpid), "getpid");
  ck(syscall(SYS_gettid), "gettid");
  ck(syscall(SYS_getppid), "getppid");
  ck(syscall(SYS_getuid), "getuid");
  ck(syscall(SYS_geteuid), "geteuid");
  ck(syscall(SYS_getgid), "getgid");
  ck(syscall(SYS_getegid), "getegid");
  uid_t r_, e_, s_;
  ck(syscall(SYS_getresuid, &r_, &e_, &s_), "getresuid");
  gid_t gr, ge, gs;
  ck(syscall(SYS_getresgid, &gr, &ge, &gs), "getresgid");
  ck(syscall(SYS_setresuid, -1, -1, -1), "setresuid");
  ck(syscall(SYS_setresgid, -1, -1, -1), "setresgid");
  ck(syscall(SYS_setreuid, -1, -1), "setreuid");
  ck(syscall(SYS_setregid, -1, -1), "setregid");
  ck(syscall(SYS_setuid, syscall(SYS_getuid)), "setuid");
  ck(syscall(SYS_setgid, syscall(SYS_getgid)), "setgid");
  gid_t groups[64];
  long ng = ck(syscall(SYS_getgroups, 64, groups), "getgroups");
  if (ng >= 0) opt(syscall(SYS_setgroups, ng, groups), "setgroups");
  ck(syscall(SYS_getpgid, 0), "getpgid");
  ck(syscall(SYS_getpgrp), "getpgrp");
  ck(syscall(SYS_getsid, 0), "getsid");
  ck(syscall(SYS_setpgid, 0, syscall(SYS_getpgid, 0)), "setpgid");
  ck(syscall(SYS_prctl, PR_SET_NAME, "broad", 0, 0, 0), "prctl set_name");
  ck(syscall(SYS_prctl, PR_GET_NAME, buf, 0, 0, 0), "prctl get_name");
  unsigned long fsbase;
  ck(syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &fsbase), "arch_prctl");
  ck(syscall(SYS_set_tid_address, &futex_word), "set_tid_address");
  struct robust_list_head *rl;
  size_t rllen;
  ck(syscall(SYS_get_robust_list, 0, &rl, &rllen), "get_robust_list");
  ck(syscall(SYS_set_robust_list, rl, rllen), "set_robust_list");
  ck(syscall(SYS_sched_yield), "sched_yield");
  cpu_set_t cs;
  ck(syscall(SYS_sched_getaffinity, 0, sizeof cs, &cs), "sched_getaffinity");
  ck(syscall(SYS_sched_setaffinity, 0, sizeof cs, &cs), "sched_setaffinity");
  struct sched_param sp = {0};
  ck(syscall(SYS_sched_getparam, 0, &sp), "sched_getparam");
  ck(syscall(SYS_sched_setparam, 0, &sp), "sched_setparam");
  ck(syscall(SYS_sched_getscheduler, 0), "sched_getscheduler");
  ck(syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &sp), "sched_setscheduler");
  ck(syscall(SYS_sched_get_priority_max, SCHED_FIFO), "sched_get_priority_max");
  ck(syscall(SYS_sched_get_priority_min, SCHED_FIFO), "sched_get_priority_min");
  struct timespec rr;
  ck(syscall(SYS_sched_rr_get_interval, 0, &rr), "sched_rr_get_interval");
  uint32_t attr[14] = {0};
  ck(syscall(SYS_sched_getattr, 0, attr, sizeof attr, 0), "sched_getattr");
  errno = 0;
  long prio = syscall(SYS_getpriority, PRIO_PROCESS, 0);
  if (errno) ck(-1, "getpriority");
  ck(syscall(SYS_setpriority, PRIO_PROCESS, 0, 20 - prio), "setpriority");
  ck(syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0), "ioprio_get");
  ck(syscall(SYS_umask, 022), "umask");
  struct rlimit rlim;
  ck(syscall(SYS_getrlimit, RLIMIT_NOFILE, &rlim), "getrlimit");
  ck(syscall(SYS_setrlimit, RLIMIT_NOFILE, &rlim), "setrlimit");
  ck(syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rlim), "prlimit64");
  struct rusage ru;
  ck(syscall(SYS_getrusage, RUSAGE_SELF, &ru), "getrusage");
  struct sysinfo si;
  ck(syscall(SYS_sysinfo, &si), "sysinfo");
  struct utsname un;
  ck(syscall(SYS_uname, &un), "uname");
  unsigned cpu, node;
  ck(syscall(SYS_getcpu, &cpu, &node, NULL), "getcpu");
  ck(syscall(SYS_personality, 0xffffffffUL), "personality");
  struct { uint32_t version; int pid; } caph = {0x20080522, 0};
  struct { uint32_t eff, perm, inh; } capd[2];
  ck(syscall(SYS_capget, &caph, capd), "capget");
  ck(syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), "syslog");
  ck(syscall(SYS_getrandom, buf, 16, 0), "getrandom");
  ck(syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 1, 1), "kcmp");

  /* the raw fork and vfork system calls (fork() is clone) */
  c = syscall(SYS_fork);
  if (c == 0) _exit(0);
  ck(c, "fork (SYS_fork)");
  wait_child(c, "wait4");
  c = vfork();
  if (c == 0) _exit(0);
  ck(c, "vfork");
  wait_child(c, "wait4");
  c = fork();
  if (c == 0) _exit(0);
  siginfo_t si2;
  ck(syscall(SYS_waitid, P_PID, c, &si2, WEXITED, NULL), "waitid");

  /* a child that starts its own session */
  c = fork();
  if (c == 0) _exit(syscall(SYS_setsid) == -1 ? 1 : 0);
  wait_child(c, "setsid");

  /* pidfd, of a child that spins in user space until it is killed.  The
   * capture records one invocation at a time: a child asleep in a system
   * call with no complete invocation yet (its first pause; a read, when the
   * parent's read above came while another task's call was recorded) would
   * hold it while the parent opens and signals */
  c = fork();
  if (c == 0)
    for (;;) __asm__ volatile("pause");
  long pfd = opt(syscall(SYS_pidfd_open, c, 0), "pidfd_open");
  if (pfd >= 0) {
    ck(syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0), "pidfd_send_signal");
    close(pfd);
  } else {
    kill(c, SIGKILL);
  }
  ck(syscall(SYS_wait4, c, &st, 0, NULL), "wait4");

  /* execve and execveat of this program */
  c = fork();
  if (c == 0) {
    char *av[] = {(char *)self, "exec-child", NULL};
    syscall(SYS_execve, "/proc/self/exe", av, environ);
    _exit(3);
  }
  wait_child(c, "execve");
  c = fork();
  if (c == 0) {
    char *av[] = {(char *)self, "exec-child", NULL};
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    syscall(SYS_execveat, fd, "", av, environ, AT_EMPTY_PATH);
    _exit(3);
  }
  wait_child(c, "execveat");
}

/* ---- files and directories -------------------------------------------- */

static void files(void)
{
  int fd, fd2, d;
  struct stat st;

  ck(syscall(SYS_mkdir, "bw.tmp", 0755), "mkdir");
  ck(syscall(SYS_chdir, "bw.tmp"), "chdir");
  d = ck(syscall(SYS_open, ".", O_RDONLY | O_DIRECTORY), "open");
  ck(syscall(SYS_mkdirat, d, "sub", 0755), "mkdirat");
  fd = ck(syscall(SYS_openat, d, "f", O_RDWR | O_CREAT | O_TRUNC, 0644), "openat");
  ck(syscall(SYS_write, fd, "hello, world\n", 13), "write");
  ck(syscall(SYS_pwrite64, fd, "HELLO", 5, 0), "pwrite64");
  expect(ck(syscall(SYS_pread64, fd, buf, 5, 0), "pread64") == 5 && !memcmp(buf, "HELLO", 5), "pread64");
  struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
  ck(syscall(SYS_writev, fd, iov, 2), "writev");
  ck(syscall(SYS_pwritev, fd, iov, 2, 20, 0), "pwritev");
  ck(syscall(SYS_pwritev2, fd, iov, 2, 24, 0, 0), "pwritev2");
  ck(syscall(SYS_lseek, fd, 0, SEEK_SET), "lseek");
  char a[4], b[4];
  struct iovec riov[2] = {{a, 4}, {b, 4}};
  ck(syscall(SYS_readv, fd, riov, 2), "readv");
  ck(syscall(SYS_preadv, fd, riov, 2, 0, 0), "preadv");
  ck(syscall(SYS_preadv2, fd, riov, 2, 0, 0, 0), "preadv2");
  ck(syscall(SYS_fstat, fd, &st), "fstat");
  ck(syscall(SYS_stat, "f", &st), "stat");
  ck(syscall(SYS_lstat, "f", &st), "lstat");
  ck(syscall(SYS_newfstatat, d, "f", &st, 0), "newfstatat");
  struct statx stx;
  ck(syscall(SYS_statx, d, "f", 0, STATX_BASIC_STATS, &stx), "statx");
  ck(syscall(SYS_fchmod, fd, 0600), "fchmod");
  ck(syscall(SYS_chmod, "f", 0644), "chmod");
  ck(syscall(SYS_fchmodat, d, "f", 0640, 0), "fchmodat");
  ck(syscall(SYS_fchown, fd, 0, 0), "fchown");
  ck(syscall(SYS_chown, "f", 0, 0), "chown");
  ck(syscall(SYS_lchown, "f", 0, 0), "lchown");
  ck(syscall(SYS_fchownat, d, "f", 0, 0, 0), "fchownat");
  struct timespec times2[2] = {{1000, 0}, {2000, 0}};
  ck(syscall(SYS_utimensat, d, "f", times2, 0), "utimensat");
  struct timeval tv2[2] = {{1000, 0}, {2000, 0}};
  ck(syscall(SYS_utimes, "f", tv2), "utimes");
  ck(syscall(SYS_futimesat, d, "f", tv2), "futimesat");
  struct { long actime, modtime; } ut = {1000, 2000};
  ck(syscall(SYS_utime, "f", &ut), "utime");
  ck(syscall(SYS_ftruncate, fd, 4096), "ftruncate");
  ck(syscall(SYS_truncate, "f", 8192), "truncate");
  opt(syscall(SYS_fallocate, fd, 0, 0, 16384), "fallocate");
  ck(syscall(SYS_fadvise64, fd, 0, 0, POSIX_FADV_SEQUENTIAL), "fadvise64");
  ck(syscall(SYS_readahead, fd, 0, 4096), "readahead");
  ck(syscall(SYS_fsync, fd), "fsync");
  ck(syscall(SYS_fdatasync, fd), "fdatasync");
  ck(syscall(SYS_sync_file_range, fd, 0, 4096, SYNC_FILE_RANGE_WRITE), "sync_file_range");
  ck(syscall(SYS_syncfs, fd), "syncfs");
  ck(syscall(SYS_flock, fd, LOCK_EX), "flock");
  ck(syscall(SYS_flock, fd, LOCK_UN), "flock");
  ck(syscall(SYS_fcntl, fd, F_GETFL), "fcntl");
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10};
  ck(syscall(SYS_fcntl, fd, F_SETLK, &fl), "fcntl setlk");
  fd2 = ck(syscall(SYS_dup, fd), "dup");
  ck(syscall(SYS_dup2, fd, 100), "dup2");
  ck(syscall(SYS_dup3, fd, 101, O_CLOEXEC), "dup3");
  ck(syscall(SYS_close_range, 100, 101, 0), "close_range");
  ck(syscall(SYS_close, fd2), "close");
  ck(syscall(SYS_access, "f", R_OK | W_OK), "access");
  ck(syscall(SYS_faccessat, d, "f", R_OK, 0), "faccessat");
  opt(syscall(SYS_faccessat2, d, "f", R_OK, AT_EACCESS), "faccessat2");
  ck(syscall(SYS_link, "f", "f.link"), "link");
  ck(syscall(SYS_linkat, d, "f", d, "f.link2", 0), "linkat");
  ck(syscall(SYS_symlink, "f", "f.sym"), "symlink");
  ck(syscall(SYS_symlinkat, "f", d, "f.sym2"), "symlinkat");
  ck(syscall(SYS_readlink, "f.sym", buf, sizeof buf), "readlink");
  ck(syscall(SYS_readlinkat, d, "f.sym2", buf, sizeof buf), "readlinkat");
  ck(syscall(SYS_rename, "f.link", "g"), "rename");
  ck(syscall(SYS_renameat, d, "g", d, "h"), "renameat");
  ck(syscall(SYS_renameat2, d, "h", d, "f.link2", RENAME_EXCHANGE), "renameat2");
  ck(syscall(SYS_unlink, "f.link2"), "unlink");
  ck(syscall(SYS_unlinkat, d, "h", 0), "unlinkat");
  ck(syscall(SYS_unlinkat, d, "f.sym2", 0), "unlinkat");
  ck(syscall(SYS_mknodat, d, "fifo", S_IFIFO | 0600, 0), "mknodat");
  ck(syscall(SYS_mknod, "fifo2", S_IFIFO | 0600, 0), "mknod");
  long cfd = ck(syscall(SYS_creat, "c", 0644), "creat");
  close(cfd);
  struct open_how how = {.flags = O_RDONLY};
  long o2 = opt(syscall(SYS_openat2, d, "f", &how, sizeof how), "openat2");
  if (o2 >= 0) close(o2);
  /* extended attributes (user.*, on the share's ext4 or /tmp's tmpfs) */
  if (opt(syscall(SYS_setxattr, "f", "user.bw", "1", 1, 0), "setxattr") == 0) {
    ck(syscall(SYS_lsetxattr, "f", "user.bw2", "2", 1, 0), "lsetxattr");
    ck(syscall(SYS_fsetxattr, fd, "user.bw3", "3", 1, 0), "fsetxattr");
    ck(syscall(SYS_getxattr, "f", "user.bw", buf, sizeof buf), "getxattr");
    ck(syscall(SYS_lgetxattr, "f", "user.bw2", buf, sizeof buf), "lgetxattr");
    ck(syscall(SYS_fgetxattr, fd, "user.bw3", buf, sizeof buf), "fgetxattr");
    ck(syscall(SYS_listxattr, "f", buf, sizeof buf), "listxattr");
    ck(syscall(SYS_llistxattr, "f", buf, sizeof buf), "llistxattr");
    ck(syscall(SYS_flistxattr, fd, buf, sizeof buf), "flistxattr");
    ck(syscall(SYS_removexattr, "f", "user.bw"), "removexattr");
    ck(syscall(SYS_lremovexattr, "f", "user.bw2"), "lremovexattr");
    ck(syscall(SYS_fremovexattr, fd, "user.bw3"), "fremovexattr");
  }
  ck(syscall(SYS_getdents64, d, buf, sizeof buf), "getdents64");
  ck(syscall(SYS_lseek, d, 0, SEEK_SET), "lseek");
  ck(syscall(SYS_getdents, d, buf, sizeof buf), "getdents");
  struct statfs sfs;
  ck(syscall(SYS_statfs, ".", &sfs), "statfs");
  ck(syscall(SYS_fstatfs, fd, &sfs), "fstatfs");
  ck(syscall(SYS_getcwd, buf, sizeof buf), "getcwd");
  ck(syscall(SYS_chdir, "sub"), "chdir");
  ck(syscall(SYS_fchdir, d), "fchdir");
  ck(syscall(SYS_rmdir, "sub"), "rmdir");

  /* moving data between descriptors */
  int out = ck(syscall(SYS_openat, d, "out", O_RDWR | O_CREAT | O_TRUNC, 0644), "openat");
  off_t off = 0;
  ck(syscall(SYS_sendfile, out, fd, &off, 64), "sendfile");
  loff_t ioff = 0, ooff = 64;
  ck(syscall(SYS_copy_file_range, fd, &ioff, out, &ooff, 64, 0), "copy_file_range");
  int p1[2], p2[2];
  ck(syscall(SYS_pipe, p1), "pipe");
  ck(syscall(SYS_pipe2, p2, 0), "pipe2");
  loff_t soff = 0;
  ck(syscall(SYS_splice, fd, &soff, p1[1], NULL, 32, 0), "splice");
  ck(syscall(SYS_tee, p1[0], p2[1], 32, 0), "tee");
  struct iovec viov = {"vmsplice", 8};
  ck(syscall(SYS_vmsplice, p2[1], &viov, 1, 0), "vmsplice");
  int nread = 0;
  ck(syscall(SYS_ioctl, p2[0], FIONREAD, &nread), "ioctl");
  expect(nread == 40, "ioctl FIONREAD");
  close(p1[0]); close(p1[1]); close(p2[0]); close(p2[1]);

  /* file descriptors of other kinds */
  int in = ck(syscall(SYS_inotify_init1, IN_CLOEXEC), "inotify_init1");
  long wd = ck(syscall(SYS_inotify_add_watch, in, ".", IN_CREATE | IN_DELETE), "inotify_add_watch");
  ck(syscall(SYS_inotify_rm_watch, in, wd), "inotify_rm_watch");
  close(in);
  int in0 = ck(syscall(SYS_inotify_init), "inotify_init");
  close(in0);
  int efd = ck(syscall(SYS_eventfd2, 3, EFD_CLOEXEC), "eventfd2");
  uint64_t ev = 0;
  expect(ck(syscall(SYS_read, efd, &ev, 8), "read eventfd") == 8 && ev == 3, "read eventfd");
  close(efd);
  efd = ck(syscall(SYS_eventfd, 0), "eventfd");
  close(efd);
  int mfd = ck(syscall(SYS_memfd_create, "bw", MFD_CLOEXEC), "memfd_create");
  ck(syscall(SYS_ftruncate, mfd, 4096), "ftruncate");
  close(mfd);
  long fan = opt(syscall(SYS_fanotify_init, FAN_CLASS_NOTIF, O_RDONLY), "fanotify_init");
  if (fan >= 0) {
    opt(syscall(SYS_fanotify_mark, fan, FAN_MARK_ADD, FAN_MODIFY, d, "out"), "fanotify_mark");
    close(fan);
  }
  aio_context_t ctx = 0;
  if (opt(syscall(SYS_io_setup, 4, &ctx), "io_setup") == 0) ck(syscall(SYS_io_destroy, ctx), "io_destroy");

  /* the scratch directory goes again */
  close(out);
  close(fd);
  const char *names[] = {"f", "f.sym", "fifo", "fifo2", "c", "out"};
  for (unsigned i = 0; i < sizeof names / sizeof *names; i++) ck(syscall(SYS_unlinkat, d, names[i], 0), names[i]);
  close(d);
  ck(syscall(SYS_chdir, ".."), "chdir");
  ck(syscall(SYS_rmdir, "bw.tmp"), "rmdir");
  ck(syscall(SYS_sync), "sync");
}

/* ---- memory ----------------------------------------------------------- */

static void memory(void)
{
  long ps = 4096;
  char *m = (char *)syscall(SYS_mmap, NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) { ck(-1, "mmap"); return; }
  memset(m, 1, 4 * ps);
  ck(syscall(SYS_mprotect, m, ps, PROT_READ), "mprotect");
  ck(syscall(SYS_madvise, m + ps, ps, MADV_DONTNEED), "madvise");
  unsigned char vec[4];
  ck(syscall(SYS_mincore, m, 4 * ps, vec), "mincore");
  ck(syscall(SYS_mlock, m, ps), "mlock");
  ck(syscall(SYS_munlock, m, ps), "munlock");
  opt(syscall(SYS_mlock2, m, ps, 0), "mlock2");
  ck(syscall(SYS_munlock, m, ps), "munlock");
  /* one mapping again: mremap moves a single one */
  ck(syscall(SYS_mprotect, m, ps, PROT_READ | PROT_WRITE), "mprotect");
  char *m2 = (char *)syscall(SYS_mremap, m, 4 * ps, 8 * ps, MREMAP_MAYMOVE, 0);
  if (m2 == MAP_FAILED) { ck(-1, "mremap"); m2 = m; }
  ck(syscall(SYS_munmap, m2, 8 * ps), "munmap");
  /* a shared file mapping to msync */
  int fd = ck(syscall(SYS_memfd_create, "bwmap", 0), "memfd_create");
  ck(syscall(SYS_ftruncate, fd, ps), "ftruncate");
  char *f = (char *)syscall(SYS_mmap, NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (f != MAP_FAILED) {
    f[0] = 'x';
    ck(syscall(SYS_msync, f, ps, MS_SYNC), "msync");
    ck(syscall(SYS_munmap, f, ps), "munmap");
  } else {
    ck(-1, "mmap shared");
  }
  close(fd);
  long cur = syscall(SYS_brk, 0);
  expect(syscall(SYS_brk, cur + 2 * ps) == cur + 2 * ps, "brk grow");
  ck(syscall(SYS_brk, cur), "brk");
  /* No mlockall: it faults in every page of the process (a thread's 8 MiB
   * stack among them), tens of MiB of events. */
  ck(syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0), "membarrier");
  char src[16] = "process_vm", dst[16] = {0};
  struct iovec l = {dst, sizeof dst}, r = {src, sizeof src};
  ck(syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0), "process_vm_readv");
  expect(!strcmp(dst, "process_vm"), "process_vm_readv");
  long pk = opt(syscall(SYS_pkey_alloc, 0, 0), "pkey_alloc");
  if (pk >= 0) ck(syscall(SYS_pkey_free, pk), "pkey_free");
}

/* ---- IPC -------------------------------------------------------------- */

static void ipc(void)
{
  struct { long type; char text[16]; } msg = {1, "sysv"};
  int q = ck(syscall(SYS_msgget, IPC_PRIVATE, IPC_CREAT | 0600), "msgget");
  ck(syscall(SYS_msgsnd, q, &msg, sizeof msg.text, 0), "msgsnd");
  memset(&msg, 0, sizeof msg);
  expect(ck(syscall(SYS_msgrcv, q, &msg, sizeof msg.text, 0, IPC_NOWAIT), "msgrcv") > 0 && !strcmp(msg.text, "sysv"),
         "msgrcv");
  ck(syscall(SYS_msgctl, q, IPC_RMID, NULL), "msgctl");

  int s = ck(syscall(SYS_semget, IPC_PRIVATE, 1, IPC_CREAT | 0600), "semget");
  ck(syscall(SYS_semctl, s, 0, SETVAL, 1), "semctl");
  struct sembuf op = {0, -1, 0};
  ck(syscall(SYS_semop, s, &op, 1), "semop");
  struct timespec tmo = {1, 0};
  op.sem_op = 1;
  ck(syscall(SYS_semtimedop, s, &op, 1, &tmo), "semtimedop");
  ck(syscall(SYS_semctl, s, 0, IPC_RMID), "semctl");

  int sh = ck(syscall(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600), "shmget");
  char *p = (char *)syscall(SYS_shmat, sh, NULL, 0);
  if (p == (char *)-1) {
    ck(-1, "shmat");
  } else {
    p[0] = 's';
    ck(syscall(SYS_shmdt, p), "shmdt");
  }
  struct shmid_ds ds;
  ck(syscall(SYS_shmctl, sh, IPC_STAT, &ds), "shmctl");
  ck(syscall(SYS_shmctl, sh, IPC_RMID, NULL), "shmctl");

  /* POSIX message queues: the system calls work without /dev/mqueue */
  struct mq_attr ma = {.mq_maxmsg = 4, .mq_msgsize = 32};
  long mq = opt(syscall(SYS_mq_open, "bw", O_RDWR | O_CREAT | O_EXCL, 0600, &ma), "mq_open");
  if (mq >= 0) {
    ck(syscall(SYS_mq_timedsend, mq, "posix", 6, 1, NULL), "mq_timedsend");
    struct mq_attr got;
    ck(syscall(SYS_mq_getsetattr, mq, NULL, &got), "mq_getsetattr");
    unsigned prio;
    expect(ck(syscall(SYS_mq_timedreceive, mq, buf, 32, &prio, NULL), "mq_timedreceive") == 6, "mq_timedreceive");
    ck(syscall(SYS_mq_unlink, "bw"), "mq_unlink");
    close(mq);
  }
}

/* ---- sockets ---------------------------------------------------------- */

/* The guest boots with lo down: bring it up for the AF_INET part. */
static void loopback_up(void)
{
  struct ifreq ifr;
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags |= IFF_UP;
    ck(ioctl(s, SIOCSIFFLAGS, &ifr), "ioctl SIOCSIFFLAGS lo");
  }
  if (s >= 0) close(s);
}

static void sockets(void)
{
  int sv[2];
  ck(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
  /* sendmsg with a descriptor (SCM_RIGHTS), recvmsg */
  char cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec io = {"fd", 2};
  struct msghdr mh = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  int one = 1;
  memcpy(CMSG_DATA(cm), &one, sizeof one);
  ck(syscall(SYS_sendmsg, sv[0], &mh, 0), "sendmsg");
  char rb[8];
  struct iovec rio = {rb, sizeof rb};
  struct msghdr rh = {.msg_iov = &rio, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  expect(ck(syscall(SYS_recvmsg, sv[1], &rh, 0), "recvmsg") == 2, "recvmsg");
  cm = CMSG_FIRSTHDR(&rh);
  if (cm && cm->cmsg_type == SCM_RIGHTS) {
    int got;
    memcpy(&got, CMSG_DATA(cm), sizeof got);
    close(got);
  }
  ck(syscall(SYS_shutdown, sv[0], SHUT_WR), "shutdown");
  close(sv[0]);
  close(sv[1]);

  /* AF_UNIX stream: listen, connect, accept4 (an abstract address) */
  struct sockaddr_un ua = {.sun_family = AF_UNIX};
  memcpy(ua.sun_path, "\0broad_workload", 15);
  socklen_t ual = offsetof(struct sockaddr_un, sun_path) + 15;
  int ls = ck(syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0), "socket");
  ck(syscall(SYS_bind, ls, &ua, ual), "bind");
  ck(syscall(SYS_listen, ls, 4), "listen");
  int cs = ck(syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0), "socket");
  ck(syscall(SYS_connect, cs, &ua, ual), "connect");
  int as = ck(syscall(SYS_accept4, ls, NULL, NULL, SOCK_CLOEXEC), "accept4");
  ck(syscall(SYS_sendto, cs, "unix", 4, 0, NULL, 0), "sendto");
  expect(ck(syscall(SYS_recvfrom, as, buf, sizeof buf, 0, NULL, NULL), "recvfrom") == 4, "recvfrom");
  int cs2 = ck(syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0), "socket");
  ck(syscall(SYS_connect, cs2, &ua, ual), "connect");
  int as2 = ck(syscall(SYS_accept, ls, NULL, NULL), "accept");
  close(as2); close(cs2); close(as); close(cs); close(ls);

  /* AF_INET loopback: TCP and UDP */
  loopback_up();
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  int t = ck(syscall(SYS_socket, AF_INET, SOCK_STREAM, 0), "socket");
  ck(syscall(SYS_setsockopt, t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), "setsockopt");
  ck(syscall(SYS_bind, t, &a, sizeof a), "bind");
  ck(syscall(SYS_listen, t, 4), "listen");
  ck(syscall(SYS_getsockname, t, &a, &al), "getsockname");
  int c = ck(syscall(SYS_socket, AF_INET, SOCK_STREAM, 0), "socket");
  ck(syscall(SYS_setsockopt, c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), "setsockopt");
  ck(syscall(SYS_connect, c, &a, sizeof a), "connect tcp");
  int s = ck(syscall(SYS_accept4, t, NULL, NULL, 0), "accept4");
  struct sockaddr_in pa;
  socklen_t pal = sizeof pa;
  ck(syscall(SYS_getpeername, s, &pa, &pal), "getpeername");
  int err = 0;
  socklen_t el = sizeof err;
  ck(syscall(SYS_getsockopt, c, SOL_SOCKET, SO_ERROR, &err, &el), "getsockopt");
  ck(syscall(SYS_sendto, c, "tcp!", 4, 0, NULL, 0), "sendto");
  expect(ck(syscall(SYS_recvfrom, s, buf, 4, MSG_WAITALL, NULL, NULL), "recvfrom") == 4, "recvfrom tcp");
  ck(syscall(SYS_shutdown, c, SHUT_RDWR), "shutdown");
  close(s); close(c); close(t);

  int u = ck(syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0), "socket");
  struct sockaddr_in ub = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t ubl = sizeof ub;
  ck(syscall(SYS_bind, u, &ub, sizeof ub), "bind");
  ck(syscall(SYS_getsockname, u, &ub, &ubl), "getsockname");
  struct mmsghdr mm[2];
  struct iovec mio[2] = {{"m1", 2}, {"m2", 2}};
  memset(mm, 0, sizeof mm);
  for (int i = 0; i < 2; i++) {
    mm[i].msg_hdr.msg_iov = &mio[i];
    mm[i].msg_hdr.msg_iovlen = 1;
    mm[i].msg_hdr.msg_name = &ub;
    mm[i].msg_hdr.msg_namelen = sizeof ub;
  }
  expect(ck(syscall(SYS_sendmmsg, u, mm, 2, 0), "sendmmsg") == 2, "sendmmsg");
  char r1[4], r2[4];
  struct iovec rio2[2] = {{r1, 4}, {r2, 4}};
  memset(mm, 0, sizeof mm);
  for (int i = 0; i < 2; i++) {
    mm[i].msg_hdr.msg_iov = &rio2[i];
    mm[i].msg_hdr.msg_iovlen = 1;
  }
  expect(ck(syscall(SYS_recvmmsg, u, mm, 2, MSG_DONTWAIT, NULL), "recvmmsg") == 2, "recvmmsg");
  close(u);
}

/* ---- time ------------------------------------------------------------- */

static void timing(void)
{
  struct timespec ts;
  ck(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts), "clock_gettime");
  ck(syscall(SYS_clock_getres, CLOCK_MONOTONIC, &ts), "clock_getres");
  struct timeval tv;
  ck(syscall(SYS_gettimeofday, &tv, NULL), "gettimeofday");
  time_t tt;
  ck(syscall(SYS_time, &tt), "time");
  struct tms tm;
  ck(syscall(SYS_times, &tm), "times");
  struct timex tx = {.modes = 0};
  ck(syscall(SYS_adjtimex, &tx), "adjtimex");
  struct timex tx2 = {.modes = 0};
  ck(syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx2), "clock_adjtime");

  /* POSIX timers (no signal) */
  struct sigevent sev = {.sigev_notify = SIGEV_NONE};
  int tid;
  ck(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &tid), "timer_create");
  struct itimerspec its = {{0, 0}, {10, 0}}, old;
  ck(syscall(SYS_timer_settime, tid, 0, &its, &old), "timer_settime");
  ck(syscall(SYS_timer_gettime, tid, &old), "timer_gettime");
  ck(syscall(SYS_timer_getoverrun, tid), "timer_getoverrun");
  ck(syscall(SYS_timer_delete, tid), "timer_delete");

  /* timerfd: a 1 ms timer read once */
  int tfd = ck(syscall(SYS_timerfd_create, CLOCK_MONOTONIC, TFD_CLOEXEC), "timerfd_create");
  struct itimerspec ti = {{0, 0}, {0, 1000000}};
  ck(syscall(SYS_timerfd_settime, tfd, 0, &ti, NULL), "timerfd_settime");
  ck(syscall(SYS_timerfd_gettime, tfd, &ti), "timerfd_gettime");
  uint64_t exp = 0;
  expect(ck(syscall(SYS_read, tfd, &exp, 8), "read timerfd") == 8 && exp >= 1, "read timerfd");
  close(tfd);

  /* interval timers: armed far ahead and disarmed */
  struct itimerval iv = {{0, 0}, {100, 0}}, oiv;
  ck(syscall(SYS_setitimer, ITIMER_REAL, &iv, &oiv), "setitimer");
  ck(syscall(SYS_getitimer, ITIMER_REAL, &oiv), "getitimer");
  memset(&iv, 0, sizeof iv);
  ck(syscall(SYS_setitimer, ITIMER_REAL, &iv, NULL), "setitimer");
  ck(syscall(SYS_alarm, 100), "alarm");
  ck(syscall(SYS_alarm, 0), "alarm");
}

/* ---- signals ---------------------------------------------------------- */

static volatile sig_atomic_t got_usr1, got_usr2;
static void on_usr1(int s) { (void)s; got_usr1++; }
static void on_usr2(int s) { (void)s; got_usr2++; }

/* glibc's sigaction adds its restorer; the raw call needs one too. */
static void set_handler(int sig, void (*fn)(int))
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn;
  sa.sa_flags = SA_RESTART | SA_ONSTACK;
  ck(sigaction(sig, &sa, NULL), "rt_sigaction");
}

static void signals(void)
{
  sigset_t set, old;
  struct sigaction q;
  ck(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &q, 8), "rt_sigaction");
  set_handler(SIGUSR1, on_usr1);
  set_handler(SIGUSR2, on_usr2);

  static char altstack[65536];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack}, oss;
  ck(syscall(SYS_sigaltstack, &ss, &oss), "sigaltstack");

  /* a signal to itself, handled (rt_sigreturn) */
  ck(syscall(SYS_kill, getpid(), SIGUSR1), "kill");
  expect(got_usr1 == 1, "SIGUSR1 handled");
  ck(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1), "tgkill");
  ck(syscall(SYS_tkill, syscall(SYS_gettid), SIGUSR1), "tkill");

  /* pending while blocked: rt_sigpending, rt_sigsuspend */
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  ck(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &old, 8), "rt_sigprocmask");
  ck(syscall(SYS_kill, getpid(), SIGUSR2), "kill");
  sigset_t pend;
  sigemptyset(&pend);
  ck(syscall(SYS_rt_sigpending, &pend, 8), "rt_sigpending");
  expect(sigismember(&pend, SIGUSR2), "rt_sigpending");
  sigset_t none;
  sigemptyset(&none);
  long r = syscall(SYS_rt_sigsuspend, &none, 8);
  expect(r == -1 && errno == EINTR && got_usr2 == 1, "rt_sigsuspend");

  /* queued real-time signals taken synchronously */
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN);
  ck(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8), "rt_sigprocmask");
  siginfo_t si;
  memset(&si, 0, sizeof si);
  si.si_code = SI_QUEUE;
  si.si_pid = getpid();
  si.si_uid = getuid();
  si.si_value.sival_int = 7;
  ck(syscall(SYS_rt_sigqueueinfo, getpid(), SIGRTMIN, &si), "rt_sigqueueinfo");
  ck(syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), SIGRTMIN, &si), "rt_tgsigqueueinfo");
  struct timespec tmo = {1, 0};
  siginfo_t got;
  expect(ck(syscall(SYS_rt_sigtimedwait, &set, &got, &tmo, 8), "rt_sigtimedwait") == SIGRTMIN, "rt_sigtimedwait");
  expect(ck(syscall(SYS_rt_sigtimedwait, &set, &got, &tmo, 8), "rt_sigtimedwait") == SIGRTMIN, "rt_sigtimedwait");

  /* signalfd */
  ck(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8), "rt_sigprocmask");
  int sfd = ck(syscall(SYS_signalfd4, -1, &set, 8, SFD_CLOEXEC), "signalfd4");
  ck(syscall(SYS_kill, getpid(), SIGRTMIN), "kill");
  struct signalfd_siginfo ssi;
  expect(ck(syscall(SYS_read, sfd, &ssi, sizeof ssi), "read signalfd") == sizeof ssi, "read signalfd");
  close(sfd);
  sfd = ck(syscall(SYS_signalfd, -1, &set, 8), "signalfd");
  close(sfd);
  ck(syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, 8), "rt_sigprocmask");

  /* pause, woken by a child that signals until it is killed */
  pid_t parent = getpid(), c = fork();
  if (c == 0) {
    for (;;) {
      kill(parent, SIGUSR1);
      sleep_ms(20);
    }
  }
  int before = got_usr1;
  r = syscall(SYS_pause);
  expect(r == -1 && errno == EINTR && got_usr1 > before, "pause");
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  ck(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, 8), "rt_sigprocmask");
  ck(syscall(SYS_kill, c, SIGKILL), "kill");
  int st;
  ck(syscall(SYS_wait4, c, &st, 0, NULL), "wait4");
  struct timespec zero = {0, 0};
  while (syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, 8) == SIGUSR1)
    ;
  ck(syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, 8), "rt_sigprocmask");
  ss.ss_flags = SS_DISABLE;
  ck(syscall(SYS_sigaltstack, &ss, NULL), "sigaltstack");
}

/* ---- polling ---------------------------------------------------------- */

static void polling(void)
{
  int p[2];
  ck(syscall(SYS_pipe2, p, 0), "pipe2");
  ck(syscall(SYS_write, p[1], "x", 1), "write");
  struct pollfd f = {p[0], POLLIN, 0};
  expect(ck(syscall(SYS_poll, &f, 1, 0), "poll") == 1, "poll");
  struct timespec zero = {0, 0};
  expect(ck(syscall(SYS_ppoll, &f, 1, &zero, NULL, 8), "ppoll") == 1, "ppoll");
  fd_set rs;
  FD_ZERO(&rs);
  FD_SET(p[0], &rs);
  struct timeval tz = {0, 0};
  expect(ck(syscall(SYS_select, p[0] + 1, &rs, NULL, NULL, &tz), "select") == 1, "select");
  FD_ZERO(&rs);
  FD_SET(p[0], &rs);
  expect(ck(syscall(SYS_pselect6, p[0] + 1, &rs, NULL, NULL, &zero, NULL), "pselect6") == 1, "pselect6");
  int ep = ck(syscall(SYS_epoll_create1, EPOLL_CLOEXEC), "epoll_create1");
  int ep0 = ck(syscall(SYS_epoll_create, 4), "epoll_create");
  close(ep0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = p[0]}, out[2];
  ck(syscall(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, p[0], &ev), "epoll_ctl");
  expect(ck(syscall(SYS_epoll_wait, ep, out, 2, 0), "epoll_wait") == 1, "epoll_wait");
  expect(ck(syscall(SYS_epoll_pwait, ep, out, 2, 0, NULL, 8), "epoll_pwait") == 1, "epoll_pwait");
  opt(syscall(SYS_epoll_pwait2, ep, out, 2, &zero, NULL, 8), "epoll_pwait2");
  ck(syscall(SYS_epoll_ctl, ep, EPOLL_CTL_DEL, p[0], &ev), "epoll_ctl");
  close(ep);
  close(p[0]);
  close(p[1]);
}

/* What the exec'd child does: a few calls of its own, then exit. */
static int exec_child(void)
{
  ck(syscall(SYS_getppid), "getppid");
  return failures ? 1 : 0;
}

/* A thread that ends with the exit system call (not exit_group). */
static void *short_thread(void *arg)
{
  (void)arg;
  syscall(SYS_gettid);
  return NULL;
}

int main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 2 && !strcmp(argv[1], "exec-child")) return exec_child();
  if (argc != 1) {
    fprintf(stderr, "usage: broad_workload\n");
    return 2;
  }
  blocking();
  processes(argv[0]);
  files();
  memory();
  ipc();
  sockets();
  timing();
  signals();
  polling();
  pthread_t t;
  expect(pthread_create(&t, NULL, short_thread, NULL) == 0, "pthread_create");
  expect(pthread_join(t, NULL) == 0, "pthread_join");
  printf("broad_workload: %s (%d failures)\n", failures ? "FAILED" : "done", failures);
  return failures ? 1 : 0;
}
