// SPDX-License-Identifier: GPL-2.0
/* The workload of tests/guest/filters-guest.sh: one system call in a loop,
 * so that a recording says which task it saw by which call it counted.
 *   filter_workload getppid SECS [CPU]  getppid() for SECS seconds
 *   filter_workload uname SECS [CPU]    uname() for SECS seconds
 *   filter_workload threads SECS        the main thread calls getppid(), a
 *                                       second thread uname(); prints
 *                                       "tid N" (the second) on stdout
 * CPU: pinned there (sched_setaffinity) before the loop.  Every 1000 calls
 * the task sleeps 1 ms, so that it is switched in often (the filters are
 * evaluated at switch-in). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static double secs;

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void loop(int use_uname)
{
  struct utsname u;
  double end = now() + secs;
  while (now() < end) {
    for (int i = 0; i < 1000; i++) {
      if (use_uname) uname(&u);
      else syscall(SYS_getppid);
    }
    usleep(1000);
  }
}

static void *uname_thread(void *unused)
{
  (void)unused;
  printf("tid %ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  loop(1);
  return NULL;
}

int main(int argc, char **argv)
{
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: filter_workload getppid|uname|threads SECS [CPU]\n");
    return 2;
  }
  secs = atof(argv[2]);
  if (argc == 4) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[3]), &set);
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }
  }
  if (!strcmp(argv[1], "getppid")) loop(0);
  else if (!strcmp(argv[1], "uname")) loop(1);
  else if (!strcmp(argv[1], "threads")) {
    pthread_t t;
    if (pthread_create(&t, NULL, uname_thread, NULL)) return 1;
    loop(0);
    pthread_join(t, NULL);
  } else return 2;
  return 0;
}
