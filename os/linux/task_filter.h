/* SPDX-License-Identifier: GPL-2.0 */
/* task_filter.c: the entry policy's filter by task (a thread, a comm, a
 * cgroup v2 subtree, a set of CPUs; kjit_ioc_config), kept as the policy's
 * bit of entry_table.h's per-CPU admitted byte for the task running on each
 * CPU, by a sched_switch probe.  Driven by config.c under its mutex, with
 * nothing attached. */
#ifndef KJIT_TASK_FILTER_H
#define KJIT_TASK_FILTER_H

#include <linux/types.h>
#include "uapi/kjit/ioctl.h"

/* Replaces the filter with c's tid, comm, cgroup_fd (KJIT_CONFIG_CGROUP)
 * and cpus (KJIT_CONFIG_CPUS), and sets every CPU's bit for the task it
 * runs now.  0, or -EBADF / -EINVAL (cgroup_fd is not a cgroup v2
 * directory, a CPU past KJIT_CONFIG_CPUS_MAX) with the filter cleared. */
int kjit_task_filter_set(const struct kjit_ioc_config *c);
/* No filter: the probe is unregistered, the cgroup reference dropped. */
void kjit_task_filter_clear(void);
/* KJIT_ENTRY_ADMIT_POLICY when a filter is set, else 0 (for
 * kjit_entry_set_policy). */
u8 kjit_task_filter_bits(void);

#endif
