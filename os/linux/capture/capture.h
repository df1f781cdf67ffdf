/* SPDX-License-Identifier: GPL-2.0 */
/* capture.c: record invocations of an attached function for off-line
 * replay (docs/capture-format.md, tools/kjit-sim/replay.*).  A plugin
 * added through the engine host; its ioctls come from control.c. */
#ifndef KJIT_CAPTURE_H
#define KJIT_CAPTURE_H

#include "uapi/kjit/ioctl.h"

int kjit_capture_start(struct kjit_ioc_capture *c);
void kjit_capture_stop(void);
int kjit_capture_read(struct kjit_ioc_capture_read *r, void __user *uarg);
void kjit_capture_exit(void);

#endif
