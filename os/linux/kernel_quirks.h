/* SPDX-License-Identifier: GPL-2.0 */
/* kernel_quirks.c: kernel bugs kjit knows of, named once at load. */
#ifndef KJIT_KERNEL_QUIRKS_H
#define KJIT_KERNEL_QUIRKS_H

void kjit_kernel_quirks_report(void);

#endif
