// SPDX-License-Identifier: GPL-2.0
/* The ioctl structures' sizes at this KJIT_ABI_VERSION.  A size is part of
 * the ioctl's number, so a structure that grows makes an older kjitctl's
 * request unknown to the module (-ENOTTY, not the version handshake's
 * "rmmod kjit && modprobe kjit"): any change here comes with a new
 * KJIT_ABI_VERSION in include/uapi/kjit/ioctl.h.  A failing assertion is a
 * build failure of this test. */
#include <stdio.h>
#include <linux/ioctl.h>
#include "uapi/kjit/ioctl.h"

_Static_assert(KJIT_ABI_VERSION == 9, "new ABI: pin its structures' sizes below");
#define PIN(s, n) _Static_assert(sizeof(struct s) == (n), #s " changed size: bump KJIT_ABI_VERSION, then pin it")
PIN(kjit_ioc_target, 144);
PIN(kjit_ioc_stats, 600);
PIN(kjit_ioc_config, 96);
PIN(kjit_ioc_results, 88);
PIN(kjit_ioc_attach_many, 24);
PIN(kjit_ioc_version, 48);
PIN(kjit_ioc_capture, 152);
PIN(kjit_ioc_capture_read, 64);

int main(void)
{
  printf("abi_pin: ABI %u, 8 ioctl structures at their pinned sizes\n", KJIT_ABI_VERSION);
  return 0;
}
