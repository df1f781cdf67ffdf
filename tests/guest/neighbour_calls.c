// SPDX-License-Identifier: GPL-2.0
/* Guest program for tests/guest/neighbours.sh: a known number of system
 * calls, so that another tool's hit count can be compared with it.
 * Usage: neighbour_calls openat|read|nanosleep N [PROFILE]
 *        neighbour_calls print FILE
 *   openat: N x (openat("/dev/null") + close); read: N x read(/dev/zero, 1);
 *   nanosleep: N x a 20 ms sleep, then "slept S": the voluntary context
 *   switches they made (a sleep whose timer expired before the task got to
 *   the scheduler, in a guest whose clock jumped while the host ran
 *   something else, makes none);
 *   print: FILE to stdout with read(), as `cat` would if busybox's did not
 *   use sendfile.
 *   Prints "pid P" (the tracers' lines are counted by pid), then, given
 *   PROFILE (/sys/kernel/tracing/kprobe_profile), "EVENT NHIT NMISSED" for
 *   each probe: how much its counters grew across the N calls.  The profile
 *   is opened before the first snapshot and read with readv, which does not
 *   go through vfs_read, so neither snapshot adds a hit of its own.
 *   Exit 1 on any failed call. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 16

struct profile {
  int n;
  char name[MAX_EVENTS][128];
  unsigned long hit[MAX_EVENTS], missed[MAX_EVENTS];
};

static char text[64 * 1024];

static int snapshot(int fd, struct profile *p) {
  struct iovec iov = {text, sizeof text - 1};
  ssize_t len, got = 0;
  if (lseek(fd, 0, SEEK_SET) != 0) return -1;
  /* seq_file hands out at most a page per call */
  while ((len = readv(fd, &iov, 1)) > 0) {
    got += len;
    iov.iov_base = text + got;
    iov.iov_len = sizeof text - 1 - got;
  }
  if (len < 0) return -1;
  text[got] = 0;
  p->n = 0;
  for (char *line = strtok(text, "\n"); line && p->n < MAX_EVENTS; line = strtok(NULL, "\n")) {
    if (sscanf(line, "%127s %lu %lu", p->name[p->n], &p->hit[p->n], &p->missed[p->n]) == 3) p->n++;
  }
  return 0;
}

static int calls(const char *what, long n) {
  char c;
  if (!strcmp(what, "openat")) {
    for (long i = 0; i < n; i++) {
      int fd = openat(AT_FDCWD, "/dev/null", O_RDONLY);
      if (fd < 0 || close(fd) != 0) return perror("openat /dev/null"), -1;
    }
    return 0;
  }
  if (!strcmp(what, "read")) {
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0) return perror("/dev/zero"), -1;
    for (long i = 0; i < n; i++)
      if (read(fd, &c, 1) != 1) return perror("read /dev/zero"), -1;
    return close(fd);
  }
  if (!strcmp(what, "nanosleep")) {
    const struct timespec ms = {0, 20000000};
    struct rusage before, after;
    if (getrusage(RUSAGE_SELF, &before) != 0) return perror("getrusage"), -1;
    for (long i = 0; i < n; i++)
      if (nanosleep(&ms, NULL) != 0) return perror("nanosleep"), -1;
    if (getrusage(RUSAGE_SELF, &after) != 0) return perror("getrusage"), -1;
    printf("slept %ld\n", after.ru_nvcsw - before.ru_nvcsw);
    return 0;
  }
  fprintf(stderr, "neighbour_calls: unknown call %s\n", what);
  return -1;
}

static int print(const char *path) {
  char buf[4096];
  ssize_t len;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return perror(path), 1;
  while ((len = read(fd, buf, sizeof buf)) > 0)
    if (write(1, buf, len) != len) return perror("stdout"), 1;
  if (len < 0) return perror(path), 1;
  return close(fd) != 0;
}

int main(int argc, char **argv) {
  long n;
  int fd = -1;
  struct profile before, after;
  if (argc == 3 && !strcmp(argv[1], "print")) return print(argv[2]);
  if (argc < 3 || argc > 4 || (n = atol(argv[2])) <= 0) {
    fprintf(stderr, "usage: neighbour_calls openat|read|nanosleep N [PROFILE] | print FILE\n");
    return 2;
  }
  printf("pid %d\n", getpid());
  if (argc == 4) {
    fd = open(argv[3], O_RDONLY);
    if (fd < 0 || snapshot(fd, &before) != 0) return perror(argv[3]), 1;
  }
  if (calls(argv[1], n) != 0) return 1;
  if (fd < 0) return 0;
  if (snapshot(fd, &after) != 0) return perror(argv[3]), 1;
  for (int i = 0; i < after.n; i++) {
    unsigned long h0 = 0, m0 = 0;
    for (int j = 0; j < before.n; j++)
      if (!strcmp(before.name[j], after.name[i])) h0 = before.hit[j], m0 = before.missed[j];
    printf("%s %lu %lu\n", after.name[i], after.hit[i] - h0, after.missed[i] - m0);
  }
  return 0;
}
