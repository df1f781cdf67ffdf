// SPDX-License-Identifier: GPL-2.0
/* Test module for guest.rt: a spinlock_t section in a function kjit
 * translates.  On PREEMPT_RT spin_lock() is a sleeping lock (an rtmutex):
 * a task that finds it held blocks in rt_spin_lock's slow path and goes to
 * sleep through the scheduler, from translated code, and the holder may be
 * preempted inside the section.  kjit_rtlock_section() holds the lock for
 * `hold_us` microseconds around a plain increment of `count`; user threads
 * call it by writing a number of calls to /proc/kjit_rtlock_enter, and read
 * the increments back from /sys/module/kjit_rtlock/parameters/count: every
 * increment must be there (the lock excluded every other holder) whatever
 * kjit did in between.  The calls come through /proc, not a module
 * parameter, because every parameter write holds the module's param_lock
 * mutex: the callers would queue there and never meet in the section. */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>
#include <linux/delay.h>
#include <linux/proc_fs.h>
#include <linux/uaccess.h>

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

static ssize_t enter_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *pos)
{
	unsigned int n, i;
	int ret = kstrtouint_from_user(ubuf, len, 0, &n);

	if (ret)
		return ret;
	if (n > 100000)
		return -EINVAL;
	for (i = 0; i < n; i++)
		kjit_rtlock_section();
	return len;
}
static const struct proc_ops enter_ops = {
	.proc_write = enter_write,
	.proc_lseek = noop_llseek,
};
static struct proc_dir_entry *enter_file;

static int count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(count));
}
static const struct kernel_param_ops count_ops = { .get = count_get };
module_param_cb(count, &count_ops, NULL, 0444);

static int __init rtlock_init(void)
{
	enter_file = proc_create("kjit_rtlock_enter", 0200, NULL, &enter_ops);
	return enter_file ? 0 : -ENOMEM;
}
module_init(rtlock_init);

static void __exit rtlock_exit(void)
{
	proc_remove(enter_file);
}
module_exit(rtlock_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kjit guest test: a contended spinlock_t section (sleeping on PREEMPT_RT)");
