// SPDX-License-Identifier: GPL-2.0
/* Test module for guest.rt: a spinlock_t section in a function kjit
 * translates.  On PREEMPT_RT spin_lock() is a sleeping lock (an rtmutex):
 * a task that finds it held blocks in rt_spin_lock's slow path and goes to
 * sleep through the scheduler, from translated code, and the holder may be
 * preempted inside the section.  kjit_rtlock_section() holds the lock for
 * `hold_us` microseconds around a plain increment of `count`; user threads
 * call it by writing to /sys/module/kjit_rtlock/parameters/enter, and read
 * the increments back from parameters/count: every increment must be there
 * (the lock excluded every other holder) whatever kjit did in between. */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>
#include <linux/delay.h>

static DEFINE_SPINLOCK(section_lock);
static unsigned long count;
static unsigned int hold_us = 30;
module_param(hold_us, uint, 0644);
MODULE_PARM_DESC(hold_us, "how long each call holds the lock");

noinline unsigned long kjit_rtlock_section(void)
{
	unsigned long c;

	spin_lock(&section_lock);
	c = READ_ONCE(count);
	udelay(READ_ONCE(hold_us));     /* others arrive and block meanwhile */
	WRITE_ONCE(count, c + 1);
	spin_unlock(&section_lock);
	return c;
}
EXPORT_SYMBOL_GPL(kjit_rtlock_section);

static int enter_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n > 100000)
		return -EINVAL;
	for (i = 0; i < n; i++)
		kjit_rtlock_section();
	return 0;
}
static const struct kernel_param_ops enter_ops = { .set = enter_set };
module_param_cb(enter, &enter_ops, NULL, 0200);

static int count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(count));
}
static const struct kernel_param_ops count_ops = { .get = count_get };
module_param_cb(count, &count_ops, NULL, 0444);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit guest test: a contended spinlock_t section (sleeping on PREEMPT_RT)");
