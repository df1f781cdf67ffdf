/* SPDX-License-Identifier: GPL-2.0 */
/* callstack.c: a kernel-only built-in tool, call/return events for folded
 * stacks.  A plugin of the engine (below the engine host). */
#ifndef KJIT_CALLSTACK_H
#define KJIT_CALLSTACK_H

#include <linux/types.h>

struct kjit_plugin;
enum { KJIT_CS_ENTRY = 1, KJIT_CS_CALL = 2, KJIT_CS_RET = 3 };
/* ts: ktime_get_mono_fast_ns() when recorded (graph durations);
 * insns: the running CPU's count of instructions executed in translated
 * code so far, valid when insns_valid (a call's instructions are its
 * return's insns minus its call's, see callstack.c); switches: the
 * thread's context switches so far (nvcsw + nivcsw), which tells whether
 * the thread left the CPU between two events.  type is written last (0
 * while the event is being filled). */
struct kjit_cs_event {
	u64 pc, sp; u32 pid; u16 type, cpu; u64 ts;
	u64 insns; u32 switches; u16 insns_valid, pad;
};
int kjit_callstack_init(u32 capacity_pow2);
void kjit_callstack_reset(void);
void kjit_callstack_free(void);
void kjit_callstack_entry(u64 pc, u64 sp);
const struct kjit_plugin *kjit_callstack_plugin(void);
const struct kjit_cs_event *kjit_callstack_ring(u64 *head, u64 *cap);

#endif
