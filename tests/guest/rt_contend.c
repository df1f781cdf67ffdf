// SPDX-License-Identifier: GPL-2.0
/* Guest program for tests/guest/rt.sh: callers of kjit_rtlock_section (the
 * kjit_rtlock test module; a write of N to ENTER calls it N times).
 *
 *   rt_contend writers ENTER THREADS CALLS
 *     THREADS threads, thread i pinned to CPU i % 2, each makes CALLS calls
 *     (in writes of 50): the lock is contended across CPUs.  Whether a
 *     waiter sleeps then depends on the scheduler (an rtlock waiter spins
 *     while the owner runs), so this mode shows mutual exclusion only.
 *   rt_contend preempt ENTER PREEMPTS
 *     A holder (SCHED_OTHER) calls the section in a loop on CPU 0 while a
 *     SCHED_FIFO thread on CPU 0 sleeps 300 us and makes one call, PREEMPTS
 *     times.  The FIFO thread's wake-up preempts the holder at once (an RT
 *     task preempts a fair one without waiting for a tick), mostly inside
 *     the section, so the FIFO thread finds the lock held by a task that is
 *     not running and must sleep on the rtmutex: a sleep that does not
 *     depend on timing luck.
 *
 * Prints "calls TOTAL" (every call made, to compare with the increments)
 * and, in preempt mode, "preempts N"; exit 1 on error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *enter_path;
static long per_thread_calls;
static long total_calls;
static int holder_started, preempts_done;

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    perror("rt_contend: sched_setaffinity");
    exit(1);
  }
}

/* Calls the section n times with one write. */
static void enter(int fd, long n) {
  char buf[24];
  int len = snprintf(buf, sizeof(buf), "%ld", n);
  if (write(fd, buf, len) != len) {
    fprintf(stderr, "rt_contend: write %s: %s\n", enter_path, strerror(errno));
    exit(1);
  }
  __atomic_add_fetch(&total_calls, n, __ATOMIC_RELAXED);
}

static int open_enter(void) {
  int fd = open(enter_path, O_WRONLY);
  if (fd < 0) {
    fprintf(stderr, "rt_contend: %s: %s\n", enter_path, strerror(errno));
    exit(1);
  }
  return fd;
}

static void *writer(void *arg) {
  int fd;
  long done;
  pin((int)(long)arg % 2);
  fd = open_enter();
  for (done = 0; done < per_thread_calls; done += 50)
    enter(fd, per_thread_calls - done < 50 ? per_thread_calls - done : 50);
  close(fd);
  return NULL;
}

static void *holder(void *arg) {
  int fd;
  (void)arg;
  pin(0);
  fd = open_enter();
  __atomic_store_n(&holder_started, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&preempts_done, __ATOMIC_ACQUIRE))
    enter(fd, 20);
  close(fd);
  return NULL;
}

static int run_writers(int threads) {
  pthread_t t[16];
  int i;
  if (threads < 1 || threads > 16) {
    fprintf(stderr, "rt_contend: 1 to 16 threads\n");
    return 1;
  }
  for (i = 0; i < threads; i++)
    if (pthread_create(&t[i], NULL, writer, (void *)(long)i) != 0) {
      perror("rt_contend: pthread_create");
      return 1;
    }
  for (i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  printf("calls %ld\n", total_calls);
  return 0;
}

static int run_preempt(long preempts) {
  struct sched_param sp = { .sched_priority = 50 };
  struct timespec pause = { 0, 300 * 1000 };
  pthread_t h;
  long i;
  int fd;

  pin(0);
  if (pthread_create(&h, NULL, holder, NULL) != 0) {
    perror("rt_contend: pthread_create");
    return 1;
  }
  while (!__atomic_load_n(&holder_started, __ATOMIC_ACQUIRE))
    sched_yield();
  /* Only now FIFO: while the holder was starting, a FIFO thread spinning
   * on the same CPU would have kept it from running. */
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
    perror("rt_contend: sched_setscheduler");
    return 1;
  }
  fd = open_enter();
  for (i = 0; i < preempts; i++) {
    nanosleep(&pause, NULL);
    enter(fd, 1);
  }
  close(fd);
  __atomic_store_n(&preempts_done, 1, __ATOMIC_RELEASE);
  pthread_join(h, NULL);
  printf("calls %ld\npreempts %ld\n", total_calls, preempts);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "writers") == 0) {
    enter_path = argv[2];
    per_thread_calls = atol(argv[4]);
    return run_writers(atoi(argv[3]));
  }
  if (argc == 4 && strcmp(argv[1], "preempt") == 0) {
    enter_path = argv[2];
    return run_preempt(atol(argv[3]));
  }
  fprintf(stderr, "usage: rt_contend writers ENTER THREADS CALLS | preempt ENTER PREEMPTS\n");
  return 2;
}
