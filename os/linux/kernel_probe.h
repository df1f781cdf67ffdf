/* SPDX-License-Identifier: GPL-2.0 */
/* kernel_probe.c: what the running kernel does that kjit must match,
 * probed and logged once at load. */
#ifndef KJIT_KERNEL_PROBE_H
#define KJIT_KERNEL_PROBE_H

/* 0, or -EOPNOTSUPP (with the reason logged) on a kernel configuration
 * kjit cannot run beside. */
int kjit_kernel_probe(void);

#endif
