/* capture.c: record invocations of an attached function for off-line replay
 * (docs/capture-format.md, os/userspace-sim/replay.*).  Kernel C only. */
#ifndef KJIT_CAPTURE_H
#define KJIT_CAPTURE_H

long kjit_capture_ioctl(unsigned int cmd, void __user *uarg);
void kjit_capture_exit(void);

#endif
