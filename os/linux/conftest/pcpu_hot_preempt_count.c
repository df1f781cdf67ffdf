// SPDX-License-Identifier: GPL-2.0
/* preempt_count lives in struct pcpu_hot, not in __preempt_count; its
 * offset is printed for the assembly (conftest.sh reads the .s). */
#include <linux/stddef.h>
#include <linux/preempt.h>
#include <asm/current.h>
void kjit_conftest_offsets(void);
void kjit_conftest_offsets(void)
{
	asm volatile("\n.ascii \"->KJIT_PCPU_HOT_PREEMPT_COUNT %c0\"" ::
		     "i" (offsetof(struct pcpu_hot, preempt_count)));
}
