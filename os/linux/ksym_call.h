/* SPDX-License-Identifier: GPL-2.0 */
/* Calling a kernel function kjit found by name, not by linking. */
#ifndef KJIT_KSYM_CALL_H
#define KJIT_KSYM_CALL_H

int kjit_ksym_call_init(void);
void kjit_ksym_call_exit(void);
/* A pointer that calls the kernel function at `addr` safely under IBT, or
 * NULL when addr is 0 or out of reach.  Valid until kjit_ksym_call_exit. */
void *kjit_ksym_callable(unsigned long addr);
#endif
