// SPDX-License-Identifier: GPL-2.0
/* Guest program for tests/guest/exact-smp.sh: THREADS threads, thread i
 * pinned to CPU i, start together (a spinning barrier, so both vCPUs are
 * inside the system call at once rather than one after the other) and each
 * calls umask N times.  With one thread it measures the call alone.
 * umask runs the same instructions every time on every kernel: no RCU read
 * section (getppid's rcu_read_unlock takes its slow path when the task was
 * preempted inside, which PREEMPT_RT's interrupt threads make common) and no
 * lock, only an xchg on the umask the threads share.
 * Usage: smp_race N THREADS      prints "calls TOTAL" and "overlap PCT": how
 *   much of the shortest thread's loop ran while every other thread was in
 *   its loop too (a test of concurrency proves nothing without it); exit 1
 *   on error. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long n_calls;
static int n_threads;
static int arrived;   /* barrier: threads spin until all have arrived */
static struct { double start, end; } span[64];  /* each thread's loop, seconds */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg) {
  long cpu = (long)arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    perror("sched_setaffinity");
    exit(1);
  }
  __atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < n_threads) {
  }
  span[cpu].start = now();
  for (long i = 0; i < n_calls; i++) syscall(SYS_umask, 022);
  span[cpu].end = now();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3 || (n_calls = atol(argv[1])) <= 0 || (n_threads = atoi(argv[2])) <= 0 ||
      n_threads > 64) {
    fprintf(stderr, "usage: smp_race N THREADS (THREADS 1..64)\n");
    return 2;
  }
  if (sysconf(_SC_NPROCESSORS_ONLN) < n_threads) {
    fprintf(stderr, "smp_race: %d threads need as many online CPUs\n", n_threads);
    return 1;
  }
  pthread_t t[64];
  for (long i = 0; i < n_threads; i++)
    if (pthread_create(&t[i], NULL, run, (void *)i) != 0) {
      fprintf(stderr, "smp_race: pthread_create failed\n");
      return 1;
    }
  for (int i = 0; i < n_threads; i++) pthread_join(t[i], NULL);
  double lo = span[0].start, hi = span[0].end, shortest = span[0].end - span[0].start;
  for (int i = 1; i < n_threads; i++) {
    if (span[i].start > lo) lo = span[i].start;
    if (span[i].end < hi) hi = span[i].end;
    if (span[i].end - span[i].start < shortest) shortest = span[i].end - span[i].start;
  }
  printf("calls %ld\noverlap %d\n", n_calls * n_threads,
         shortest > 0 && hi > lo ? (int)(100 * (hi - lo) / shortest) : 0);
  return 0;
}
