// SPDX-License-Identifier: GPL-2.0
/* kjitctl detach SYSCALL|FUNC|all: a system call by its short name first,
 * then the name itself; all detaches everything. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

int cmd_detach(int argc, char **argv)
{
  if (argc != 2) return usage();
  const char *a = argv[1];
  struct kjit_ioc_target t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  if (strlen(a) + 10 >= sizeof t.name) return 2;
  int ok = 0;
  if (strcmp(a, "all") && strncmp(a, "__x64_sys_", 10)) {
    snprintf(t.name, sizeof t.name, "__x64_sys_%s", a);
    ok = ioctl(kjit_fd, KJIT_IOC_DETACH, &t) == 0;
  }
  strcpy(t.name, !strcmp(a, "all") ? "*" : a);
  if (!ok && ioctl(kjit_fd, KJIT_IOC_DETACH, &t) < 0) {
    fprintf(stderr, "kjitctl: detach %s: %s\n", a, strerror(errno));
    return 1;
  }
  printf("detached %s\n", a);
  return 0;
}
