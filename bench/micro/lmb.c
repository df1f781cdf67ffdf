// SPDX-License-Identifier: GPL-2.0
/* lmb: lmbench-style kernel micro-benchmarks for kjit's bench.
 *
 * Usage: lmb [-t SECONDS] [-x HELLO] [-f FILE] [-k pc|cmp|hold] [BENCH...]
 *   -t  guest-time budget per benchmark (default 0.2 s)
 *   -x  static binary for fork+exec (default ./lmb-hello)
 *   -f  file for stat / open (default /etc/passwd)
 *   -k  KCOV (/sys/kernel/debug/kcov): pc / cmp enable KCOV_TRACE_PC /
 *       KCOV_TRACE_CMP in this thread and measure with coverage on; cover[0]
 *       is reset before every batch and batches stay below a quarter of the
 *       buffer, so every operation pays its full append.  hold: enable
 *       KCOV_TRACE_PC, print "kcov hold ready" and wait in pause() until a
 *       signal ends the process (the covered process the bench runs beside
 *       uncovered workloads).
 *   BENCH: null read write stat fstat openclose select siginstall sigdeliver
 *          pipe fork exec (default: all)
 * Output, one line per benchmark:
 *   lmb NAME iters N ns TOTAL_NS tsc TOTAL_TSC ns_per_op X
 * and with -k pc|cmp, after it: kcov_per_op E full F (E: KCOV entries the
 * thread appended per operation, PCs or comparison records; F: 1 if a batch
 * filled the buffer, which makes E a lower bound).
 * Each benchmark runs in batches whose size doubles until one batch takes a
 * twentieth of the budget, then repeats batches until the budget is spent, so
 * slow configurations finish in the same guest time as fast ones; compare
 * ns_per_op (CLOCK_MONOTONIC, guest time) or tsc/iters.
 * Build: gcc -O2 -static -o lmb lmb.c */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *hello = "./lmb-hello";
static const char *file = "/etc/passwd";
static double budget = 0.2;

static int fd_zero, fd_null, fd_file;
static int sel_max;
static fd_set sel_set;
static int p2c[2], c2p[2];
static pid_t pong_pid;
static volatile sig_atomic_t got_sig;

/* KCOV, from include/uapi/linux/kcov.h */
#define KCOV_INIT_TRACE _IOR('c', 1, unsigned long)
#define KCOV_ENABLE _IO('c', 100)
#define KCOV_TRACE_PC 0
#define KCOV_TRACE_CMP 1
#define KCOV_WORDS (1ul << 20)
static unsigned long *cover;       /* this thread's buffer, NULL when uncovered */
static unsigned long cover_entries; /* capacity in entries (PCs or 4-word records) */

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "lmb: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void b_null(long n) { while (n--) syscall(SYS_getppid); }
static void b_read(long n)
{
	char c;
	while (n--) if (read(fd_zero, &c, 1) != 1) die("read");
}
static void b_write(long n)
{
	char c = 0;
	while (n--) if (write(fd_null, &c, 1) != 1) die("write");
}
static void b_stat(long n)
{
	struct stat st;
	while (n--) if (stat(file, &st)) die("stat");
}
static void b_fstat(long n)
{
	struct stat st;
	while (n--) if (fstat(fd_file, &st)) die("fstat");
}
static void b_openclose(long n)
{
	while (n--) {
		int fd = open(file, O_RDONLY);
		if (fd < 0) die("open");
		close(fd);
	}
}
static void b_select(long n)
{
	while (n--) {
		fd_set r = sel_set;
		struct timeval tv = {0, 0};
		if (select(sel_max + 1, &r, NULL, NULL, &tv) < 0) die("select");
	}
}
static void on_sig(int s) { (void)s; got_sig++; }
static void b_siginstall(long n)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;
	while (n--) if (sigaction(SIGUSR1, &sa, NULL)) die("sigaction");
}
static void b_sigdeliver(long n)
{
	pid_t me = getpid();
	while (n--) kill(me, SIGUSR1);
}
static void b_pipe(long n)
{
	char c = 'x';
	while (n--) {
		if (write(p2c[1], &c, 1) != 1) die("pipe write");
		if (read(c2p[0], &c, 1) != 1) die("pipe read");
	}
}
static void b_fork(long n)
{
	while (n--) {
		pid_t p = fork();
		if (p < 0) die("fork");
		if (p == 0) _exit(0);
		waitpid(p, NULL, 0);
	}
}
static void b_exec(long n)
{
	while (n--) {
		pid_t p = fork();
		if (p < 0) die("fork");
		if (p == 0) {
			char *argv[] = {(char *)hello, NULL};
			char *envp[] = {NULL};
			execve(hello, argv, envp);
			_exit(127);
		}
		int st;
		waitpid(p, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) { fprintf(stderr, "lmb: exec %s failed\n", hello); exit(1); }
	}
}

static int kcov_open(int mode)
{
	int fd = open("/sys/kernel/debug/kcov", O_RDWR);
	if (fd < 0) die("/sys/kernel/debug/kcov");
	if (ioctl(fd, KCOV_INIT_TRACE, KCOV_WORDS)) die("KCOV_INIT_TRACE");
	cover = mmap(NULL, KCOV_WORDS * sizeof(unsigned long), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cover == MAP_FAILED) die("kcov mmap");
	if (ioctl(fd, KCOV_ENABLE, mode)) die("KCOV_ENABLE");
	cover_entries = mode == KCOV_TRACE_PC ? KCOV_WORDS - 1 : (KCOV_WORDS - 1) / 4;
	return fd;
}

static void setup(const char *name)
{
	if (!strcmp(name, "read") && (fd_zero = open("/dev/zero", O_RDONLY)) < 0) die("/dev/zero");
	if (!strcmp(name, "write") && (fd_null = open("/dev/null", O_WRONLY)) < 0) die("/dev/null");
	if (!strcmp(name, "fstat") && (fd_file = open(file, O_RDONLY)) < 0) die(file);
	if (!strcmp(name, "select")) {
		/* lmbench's select on 100 fds (files) */
		FD_ZERO(&sel_set);
		for (int i = 0; i < 100; i++) {
			int fd = open("/dev/null", O_RDONLY);
			if (fd < 0) die("select fds");
			FD_SET(fd, &sel_set);
			if (fd > sel_max) sel_max = fd;
		}
	}
	if (!strcmp(name, "siginstall") || !strcmp(name, "sigdeliver")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sig;
		sigaction(SIGUSR1, &sa, NULL);
	}
	if (!strcmp(name, "pipe")) {
		if (pipe(p2c) || pipe(c2p)) die("pipe");
		pong_pid = fork();
		if (pong_pid < 0) die("fork");
		if (pong_pid == 0) {
			char c;
			close(p2c[1]); close(c2p[0]);
			while (read(p2c[0], &c, 1) == 1)
				if (write(c2p[1], &c, 1) != 1) break;
			_exit(0);
		}
		close(p2c[0]); close(c2p[1]);
	}
}

static void teardown(const char *name)
{
	if (!strcmp(name, "pipe")) {
		close(p2c[1]); close(c2p[0]);
		waitpid(pong_pid, NULL, 0);
	}
	if (!strcmp(name, "select"))
		for (int fd = 3; fd <= sel_max; fd++) close(fd);
	if (!strcmp(name, "read")) close(fd_zero);
	if (!strcmp(name, "write")) close(fd_null);
	if (!strcmp(name, "fstat")) close(fd_file);
}

static const struct { const char *name; void (*fn)(long); } benches[] = {
	{"null", b_null}, {"read", b_read}, {"write", b_write}, {"stat", b_stat},
	{"fstat", b_fstat}, {"openclose", b_openclose}, {"select", b_select},
	{"siginstall", b_siginstall}, {"sigdeliver", b_sigdeliver}, {"pipe", b_pipe},
	{"fork", b_fork}, {"exec", b_exec},
};
#define NB (sizeof benches / sizeof benches[0])

static void run(int i)
{
	const char *name = benches[i].name;
	uint64_t lim = (uint64_t)(budget * 1e9);
	setup(name);
	benches[i].fn(2); /* warm-up: first-touch, and a kjit translation */
	long batch = 1, iters = 0;
	uint64_t ns = 0, tsc = 0, entries = 0;
	int full = 0;
	while (ns < lim) {
		if (cover) __atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
		uint64_t t0 = now_ns(), c0 = rdtsc();
		benches[i].fn(batch);
		uint64_t c1 = rdtsc(), t1 = now_ns();
		unsigned long appended = cover ? __atomic_load_n(&cover[0], __ATOMIC_RELAXED) : 0;
		ns += t1 - t0;
		tsc += c1 - c0;
		iters += batch;
		entries += appended;
		full |= cover && appended >= cover_entries;
		if ((t1 - t0) * 20 < lim && batch < (1l << 30) && appended * 4 < cover_entries / 2) batch *= 2;
	}
	teardown(name);
	printf("lmb %s iters %ld ns %llu tsc %llu ns_per_op %.1f", name, iters,
	       (unsigned long long)ns, (unsigned long long)tsc, (double)ns / iters);
	if (cover) printf(" kcov_per_op %.1f full %d", (double)entries / iters, full);
	printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int opt;
	const char *kcov = NULL;
	while ((opt = getopt(argc, argv, "t:x:f:k:")) != -1) {
		switch (opt) {
		case 't': budget = atof(optarg); break;
		case 'x': hello = optarg; break;
		case 'f': file = optarg; break;
		case 'k': kcov = optarg; break;
		default:
			fprintf(stderr, "usage: lmb [-t SECONDS] [-x HELLO] [-f FILE] [-k pc|cmp|hold] [BENCH...]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (kcov && !strcmp(kcov, "pc")) kcov_open(KCOV_TRACE_PC);
	else if (kcov && !strcmp(kcov, "cmp")) kcov_open(KCOV_TRACE_CMP);
	else if (kcov && !strcmp(kcov, "hold")) {
		kcov_open(KCOV_TRACE_PC);
		printf("kcov hold ready\n");
		for (;;) pause();
	} else if (kcov) { fprintf(stderr, "lmb: -k takes pc, cmp or hold\n"); return 2; }
	if (optind == argc) {
		for (unsigned i = 0; i < NB; i++) run(i);
		return 0;
	}
	for (int a = optind; a < argc; a++) {
		unsigned i;
		for (i = 0; i < NB; i++)
			if (!strcmp(argv[a], benches[i].name)) break;
		if (i == NB) { fprintf(stderr, "lmb: unknown benchmark %s\n", argv[a]); return 2; }
		run(i);
	}
	return 0;
}
