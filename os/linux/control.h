/* SPDX-License-Identifier: GPL-2.0 */
/* control.c: /dev/kjit, the top layer (ioctl decoding only). */
#ifndef KJIT_CONTROL_H
#define KJIT_CONTROL_H

int kjit_control_init(void);
void kjit_control_exit(void);

#endif
