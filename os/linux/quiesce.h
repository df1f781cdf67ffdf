/* SPDX-License-Identifier: GPL-2.0 */
/* quiesce.c: wait until no task can run or return into [lo, hi) of the
 * cache (RCU-tasks plus stack checks of every task).  May sleep long.
 * Bottom layer. */
#ifndef KJIT_QUIESCE_H
#define KJIT_QUIESCE_H

int kjit_quiesce_init(void);
void kjit_quiesce_range(unsigned long lo, unsigned long hi);

#endif
