// SPDX-License-Identifier: GPL-2.0
/* uffd_fault: holds a thread asleep in a page fault that kernel code takes
 * on user memory, for as long as the test wants (tests/guest/suite-guest.sh).
 *
 * A thread calls uname() into a page registered with userfaultfd; the
 * kernel's copy_to_user faults (in kjit's code cache when newuname is
 * instrumented) and the thread sleeps in handle_userfault.  The main thread
 * sees the fault message, creates DIR/uffd-blocked, waits for
 * DIR/uffd-release, resolves the fault, and checks that uname's result is
 * the same as a plain uname's.  Prints "uffd ok" or "uffd FAIL: why".
 * Build: gcc -O2 -static -pthread -o uffd_fault uffd_fault.c */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

static char *page;
static long page_size;
static long uname_ret = -1;

static void *faulting_thread(void *arg)
{
	(void)arg;
	uname_ret = syscall(SYS_uname, (struct utsname *)page);
	return NULL;
}

static int fail(const char *why)
{
	printf("uffd FAIL: %s\n", why);
	return 1;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char blocked[4096], release[4096];
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffd_msg msg;
	struct utsname native;
	pthread_t th;
	int uffd, i;

	snprintf(blocked, sizeof(blocked), "%s/uffd-blocked", dir);
	snprintf(release, sizeof(release), "%s/uffd-release", dir);
	page_size = sysconf(_SC_PAGESIZE);
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		return fail("userfaultfd unavailable");
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return fail("mmap");
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)page;
	reg.range.len = page_size;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		return fail("UFFDIO_REGISTER");
	if (pthread_create(&th, NULL, faulting_thread, NULL))
		return fail("pthread_create");

	struct pollfd p = { .fd = uffd, .events = POLLIN };
	if (poll(&p, 1, 20000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return fail("no page-fault message");
	close(open(blocked, O_CREAT | O_WRONLY, 0644));
	for (i = 0; access(release, F_OK) != 0; i++) {
		if (i > 6000)
			return fail("never released");
		usleep(50000);
	}
	char *zero = aligned_alloc(page_size, page_size);
	memset(zero, 0, page_size);
	struct uffdio_copy copy = {
		.dst = (unsigned long)page, .src = (unsigned long)zero, .len = page_size, .mode = 0,
	};
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		return fail("UFFDIO_COPY");
	pthread_join(th, NULL);
	if (uname_ret != 0)
		return fail("uname returned an error");
	if (uname(&native) || memcmp(&native, page, sizeof(native)))
		return fail("uname result differs");
	printf("uffd ok\n");
	return 0;
}
