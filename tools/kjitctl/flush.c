// SPDX-License-Identifier: GPL-2.0
/* kjitctl flush: drops every translation. */
#include <stdio.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

int cmd_flush(int argc, char **argv)
{
  if (ioctl(kjit_fd, KJIT_IOC_FLUSH, 0) < 0) {
    perror("kjitctl");
    return 1;
  }
  return 0;
}
