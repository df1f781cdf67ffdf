// SPDX-License-Identifier: GPL-2.0
/* Where the kernel's files are: /proc/kallsyms, tracefs, /dev/kjit, or the
 * same paths below $KJITCTL_SYSROOT, so that the host tests give kjitctl a
 * kernel of their own making (a kallsyms-sized function list, no module). */
#include <stdio.h>
#include <stdlib.h>
#include "kjitctl.h"

const char *kernel_path(const char *path)
{
  static char bufs[4][4096];
  static unsigned next;
  const char *root = getenv("KJITCTL_SYSROOT");
  if (!root || !*root) return path;
  char *b = bufs[next++ % 4];   /* a few live at once: callers use one or two */
  snprintf(b, sizeof bufs[0], "%s%s", root, path);
  return b;
}
