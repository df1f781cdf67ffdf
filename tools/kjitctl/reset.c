// SPDX-License-Identifier: GPL-2.0
/* kjitctl reset (and its old name icount-reset): zeroes the configured
 * tool's results. */
#include <stdio.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

int cmd_reset(int argc, char **argv)
{
  if (ioctl(kjit_fd, KJIT_IOC_RESET_RESULTS, 0) < 0) {
    perror("kjitctl");
    return 1;
  }
  return 0;
}
