// SPDX-License-Identifier: GPL-2.0
// The two flags-preserving ways a translated `ret` can compare its return
// address with a link's target, on the host CPU (bench/micro/return-link.sh):
//   locked:  xchg rcx, [rsp]; lea rcx, [rcx - T]; jrcxz hit; hit: pop rcx
//   no lock: push rcx; mov rcx, [rsp + 8]; lea rcx, [rcx - T]; jrcxz hit;
//            hit: pop rcx; lea rsp, [rsp + 8]
// each after the `push` of a return address (what a translated call does),
// against that push and its drop alone.  xchg with memory is always locked.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

#define PUSH_RET "push $0x1234\n\t"

static void locked(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile(PUSH_RET "xchg %%rcx, (%%rsp)\n\tlea -0x1234(%%rcx), %%rcx\n\t"
				 "jrcxz 1f\n1:\tpop %%rcx\n" ::: "rcx", "memory");
}

static void no_lock(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile(PUSH_RET "push %%rcx\n\tmov 8(%%rsp), %%rcx\n\tlea -0x1234(%%rcx), %%rcx\n\t"
				 "jrcxz 1f\n1:\tpop %%rcx\n\tlea 8(%%rsp), %%rsp\n" ::: "rcx", "memory");
}

static void baseline(long n)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile(PUSH_RET "lea 8(%%rsp), %%rsp\n" ::: "memory");
}

/* Best of `reps` runs, ns per iteration. */
static double best(void (*f)(long), long n, int reps)
{
	double b = 1e9;

	for (int r = 0; r < reps; r++) {
		double t0 = now();

		f(n);
		double ns = (now() - t0) / n * 1e9;

		if (ns < b)
			b = ns;
	}
	return b;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000000L;
	double l = best(locked, n, 5), u = best(no_lock, n, 5), b = best(baseline, n, 5);

	printf("locked %.2f ns\nno_lock %.2f ns\nbaseline %.2f ns\n", l, u, b);
	return 0;
}
