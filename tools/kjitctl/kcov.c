// SPDX-License-Identifier: GPL-2.0
/* kjitctl kcov enable: the kcov tool (which creates /sys/kernel/debug/kcov) on
 * every system call kjit can attach, entered only by threads that enabled
 * coverage; kjitctl kcov disable: detach, tool none.  The device stays: a client
 * that enables coverage meanwhile gets none until the next enable. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

int cmd_kcov(int argc, char **argv)
{
  if (argc != 2) return usage();
  const char *what = argv[1];
  struct kjit_ioc_config c = {.size = sizeof c, .inline_instrumentation = 1, .use_liveness = 1};
  if (!strcmp(what, "enable")) {
    c.tool = KJIT_TOOL_KCOV;
    if (ioctl(kjit_fd, KJIT_IOC_CONFIG, &c) < 0) {
      fprintf(stderr, "kjitctl kcov: configure: %s%s\n", strerror(errno),
              errno == EBUSY ? " (something is attached: `kjitctl detach all`)"
              : errno == EEXIST ? " (the kernel has its own KCOV)" : "");
      return 1;
    }
    if (attach_all_syscalls()) return 1;
    /* User page faults reach handle_mm_fault from noinstr entry code:
     * attached, it is covered from there down, as the real KCOV covers it. */
    struct kjit_ioc_target pf = {.size = sizeof pf, .name = "handle_mm_fault"};
    if (ioctl(kjit_fd, KJIT_IOC_ATTACH, &pf) < 0)
      fprintf(stderr, "kjitctl kcov: page faults not covered: attach handle_mm_fault: %s\n", strerror(errno));
    printf("kcov: /sys/kernel/debug/kcov covers every attached system call and handle_mm_fault\n");
    return 0;
  }
  if (!strcmp(what, "disable")) {
    struct kjit_ioc_target all = {.size = sizeof all, .name = "*"};
    if (ioctl(kjit_fd, KJIT_IOC_DETACH, &all) < 0 || ioctl(kjit_fd, KJIT_IOC_CONFIG, &c) < 0) {
      perror("kjitctl kcov disable");
      return 1;
    }
    return 0;
  }
  return usage();
}
