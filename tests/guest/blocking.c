// SPDX-License-Identifier: GPL-2.0
/* blocking: system calls that sleep before they finish, for the check that
 * kjit follows an invocation through its sleeps (tests/guest/suite-guest.sh).
 *
 *   blocking MODE [N]   runs MODE's blocking call N times (default 3) and
 *                       prints "MODE ok" or "MODE FAIL: why"
 *
 * In every mode the calling process sleeps first and is woken by a child
 * process (another thread group: kjit's pid filter leaves it native) or, for
 * the mutex, by a page fault resolved late.  The waker waits until the
 * sleeper is asleep in its call (/proc/PID/task/TID/stat and syscall, at
 * most 5 s) and 20 ms more, rather than a fixed delay, which a loaded host
 * can outlast: then the call would find what it waits for and not sleep.
 *   read      read() on an empty pipe the child writes to once it sleeps
 *   nanosleep nanosleep() of 300 ms
 *   futex     FUTEX_WAIT on shared memory the child changes and wakes
 *   wait4     wait4() for a child that exits once it sleeps
 *   poll      poll() on an empty pipe the child writes to once it sleeps
 *   write     write() of 256 KiB into a pipe (64 KiB) the child drains slowly
 *   mutex     read() on a pipe whose mutex another thread holds: that thread
 *             writes from a userfaultfd page, so pipe_write sleeps in the
 *             fault with the pipe's mutex held until the fault is resolved
 * With BLOCKING_STACKS=FILE, the waker appends the sleeper's kernel stack as
 * the kernel unwinds it asleep (/proc/PID/task/TID/stack) to FILE, then a
 * line "--": the return sites above the sleep are the code that runs only
 * after the wake-up, whatever the compiler inlined (nanosleep then sleeps
 * 300 ms, with a child that records it).
 * Build: gcc -O2 -static -pthread -o blocking blocking.c */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *mode, const char *why)
{
	printf("%s FAIL: %s (%s)\n", mode, why, strerror(errno));
	return 1;
}

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Whether thread `tid` of process `pid` is asleep (S or D) in system call
 * `nr` or `nr2`. */
static int asleep_in(pid_t pid, pid_t tid, long nr, long nr2)
{
	char path[64], buf[512];
	const char *state;
	long in;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (!(f = fopen(path, "r")))
		return 0;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	state = ok ? strrchr(buf, ')') : NULL;
	if (!state || (state[2] != 'S' && state[2] != 'D'))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	if (!(f = fopen(path, "r")))
		return 0;
	ok = fscanf(f, "%ld", &in) == 1;
	fclose(f);
	return ok && (in == nr || in == nr2);
}

/* Waits until that thread sleeps in the call, at most 5 s, then 20 ms more
 * (asleep in the call may still be on its way to the wait). */
static void wait_asleep(pid_t pid, pid_t tid, long nr, long nr2)
{
	int i;

	for (i = 0; i < 1000 && !asleep_in(pid, tid, nr, nr2); i++)
		sleep_ms(5);
	sleep_ms(20);
}

/* Appends the sleeping thread's kernel stack and "--" to $BLOCKING_STACKS. */
static void record_stack(pid_t pid, pid_t tid)
{
	const char *out = getenv("BLOCKING_STACKS");
	char path[64], buf[4096];
	size_t n;
	FILE *in, *f;

	if (!out)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", (int)pid, (int)tid);
	in = fopen(path, "r");
	f = fopen(out, "a");
	if (f) {
		while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, n, f);
		fputs("--\n", f);
		fclose(f);
	}
	if (in)
		fclose(in);
}

/* The waker's wait, then the sleeper's stack while it still sleeps. */
static void wait_asleep_recorded(pid_t pid, pid_t tid, long nr, long nr2)
{
	wait_asleep(pid, tid, nr, nr2);
	record_stack(pid, tid);
}

static int reap(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int pipe_read_once(int do_poll)
{
	int p[2];
	char c = 0;
	pid_t pid;

	if (pipe(p))
		return 0;
	pid = fork();
	if (pid == 0) {
		pid_t parent = getppid();

		if (do_poll)
			wait_asleep_recorded(parent, parent, SYS_poll, SYS_ppoll);
		else
			wait_asleep_recorded(parent, parent, SYS_read, SYS_read);
		_exit(write(p[1], "x", 1) == 1 ? 0 : 1);
	}
	if (do_poll) {
		struct pollfd fd = { .fd = p[0], .events = POLLIN };

		if (poll(&fd, 1, 5000) != 1 || !(fd.revents & POLLIN))
			return 0;
	}
	if (read(p[0], &c, 1) != 1 || c != 'x')
		return 0;
	close(p[0]);
	close(p[1]);
	return reap(pid);
}

static int futex_once(void)
{
	uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	long r;

	if (word == MAP_FAILED)
		return 0;
	*word = 0;
	pid = fork();
	if (pid == 0) {
		wait_asleep_recorded(getppid(), getppid(), SYS_futex, SYS_futex);
		__atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
		_exit(0);
	}
	do
		r = syscall(SYS_futex, word, FUTEX_WAIT, 0, NULL, NULL, 0);
	while (r && errno == EINTR);
	if (r && errno != EAGAIN)
		return 0;
	munmap(word, 4096);
	return reap(pid);
}

static int wait4_once(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		wait_asleep_recorded(getppid(), getppid(), SYS_wait4, SYS_wait4);
		_exit(7);
	}
	return wait4(pid, &st, 0, NULL) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7;
}

static int pipe_write_once(void)
{
	static char buf[256 << 10];
	int p[2];
	pid_t pid;

	if (pipe(p))
		return 0;
	memset(buf, 'w', sizeof(buf));
	pid = fork();
	if (pid == 0) {
		char in[16 << 10];
		size_t got = 0;
		ssize_t n;

		close(p[1]);
		wait_asleep_recorded(getppid(), getppid(), SYS_write, SYS_write);
		while ((n = read(p[0], in, sizeof(in))) > 0) {
			got += (size_t)n;
			sleep_ms(5);
		}
		_exit(got == sizeof(buf) ? 0 : 1);
	}
	close(p[0]);
	if (write(p[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return 0;
	close(p[1]);
	return reap(pid);
}

/* The mutex case: a writer thread sleeps in a userfaultfd fault inside
 * pipe_write, holding the pipe's mutex; the main thread's read() then
 * sleeps on that mutex until this handler resolves the fault. */
struct uffd_writer {
	int pipe_w;
	char *page;
	ssize_t written;
	pid_t tid;
};

static void *writer(void *arg)
{
	struct uffd_writer *w = arg;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	w->written = write(w->pipe_w, w->page, 64);
	return NULL;
}

static void *resolver(void *arg)
{
	int uffd = *(int *)arg;
	struct uffd_msg msg;
	static char src[4096] __attribute__((aligned(4096)));
	struct uffdio_copy cp;
	struct pollfd fd = { .fd = uffd, .events = POLLIN };

	if (poll(&fd, 1, 5000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return (void *)1;
	wait_asleep_recorded(getpid(), getpid(), SYS_read, SYS_read);  /* the reader, on the mutex */
	memset(src, 'm', sizeof(src));
	cp.dst = msg.arg.pagefault.address & ~4095ull;
	cp.src = (uintptr_t)src;
	cp.len = 4096;
	cp.mode = 0;
	return ioctl(uffd, UFFDIO_COPY, &cp) ? (void *)1 : NULL;
}

/* A timer wakes it; a child records its stack while it sleeps. */
static int nanosleep_once(void)
{
	struct timespec t = { 0, 300000000L };
	pid_t pid = fork();

	if (pid == 0) {
		wait_asleep_recorded(getppid(), getppid(), SYS_nanosleep, SYS_clock_nanosleep);
		_exit(0);
	}
	return pid > 0 && nanosleep(&t, NULL) == 0 && reap(pid);
}

static int mutex_once(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffd_writer w;
	pthread_t tw, tr;
	void *rres;
	char in[64];
	int p[2], uffd;

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) || pipe(p))
		return 0;
	w.page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w.page == MAP_FAILED)
		return 0;
	reg.range.start = (uintptr_t)w.page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		return 0;
	w.pipe_w = p[1];
	w.tid = 0;
	if (pthread_create(&tr, NULL, resolver, &uffd) || pthread_create(&tw, NULL, writer, &w))
		return 0;
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	wait_asleep(getpid(), w.tid, SYS_write, SYS_write);  /* in the fault, holding the mutex */
	if (read(p[0], in, sizeof(in)) != 64 || in[0] != 'm')
		return 0;
	pthread_join(tw, NULL);
	pthread_join(tr, &rres);
	close(p[0]);
	close(p[1]);
	close(uffd);
	munmap(w.page, 4096);
	return w.written == 64 && rres == NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 3, i, ok = 1;

	for (i = 0; i < n && ok; i++) {
		if (!strcmp(mode, "read"))
			ok = pipe_read_once(0);
		else if (!strcmp(mode, "poll"))
			ok = pipe_read_once(1);
		else if (!strcmp(mode, "nanosleep"))
			ok = nanosleep_once();
		else if (!strcmp(mode, "futex"))
			ok = futex_once();
		else if (!strcmp(mode, "wait4"))
			ok = wait4_once();
		else if (!strcmp(mode, "write"))
			ok = pipe_write_once();
		else if (!strcmp(mode, "mutex"))
			ok = mutex_once();
		else {
			fprintf(stderr, "usage: blocking read|poll|nanosleep|futex|wait4|write|mutex [N]\n");
			return 2;
		}
	}
	if (!ok)
		return fail(mode, "the call did not do what it should");
	printf("%s ok\n", mode);
	return 0;
}
