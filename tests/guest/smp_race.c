/* Guest program for tests/guest/exact-smp.sh: THREADS threads, thread i
 * pinned to CPU i, start together (a spinning barrier, so both vCPUs are
 * inside the system call at once rather than one after the other) and each
 * calls getppid N times.  With one thread it measures the call alone.
 * Usage: smp_race N THREADS      prints "calls TOTAL"; exit 1 on error. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static long n_calls;
static int n_threads;
static int arrived;   /* barrier: threads spin until all have arrived */

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
  for (long i = 0; i < n_calls; i++) syscall(SYS_getppid);
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
  printf("calls %ld\n", n_calls * n_threads);
  return 0;
}
