// SPDX-License-Identifier: GPL-2.0
/* Test module for the guest suite's hazard checks.  kjit attaches to
 * kjit_hazard_entry(); user space triggers it by writing a command to
 * /sys/module/kjit_hazard/parameters/cmd:
 *   ra    kjit_hazard_entry calls kjit_hazard_ra(), which records
 *         __builtin_return_address(0): must be inside kjit_hazard_entry
 *         (original text), never a code-cache address;
 *   warn  a WARN_ON_ONCE inside kjit_hazard_entry: the report must name
 *         kjit_hazard_entry+0x.. (the ud2 runs at its original address);
 *   oops  a store through a NULL pointer inside kjit_hazard_entry: an oops
 *         in translated code, whose report must name kjit_hazard_entry
 *         (the writing task is killed; the kernel is tainted D).
 * Results: parameters/ra ("ok <addr> <sym>" or "BAD ...").
 *
 * hold_text_mutex_ms: writing N makes a work item hold text_mutex for N ms
 * without writing any text, as the kprobe optimizer does across an
 * RCU-tasks grace period; text_mutex_held reads 1 while it holds it. */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kallsyms.h>
#include <linux/bug.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/delay.h>

static unsigned long recorded_ra;
static int do_warn;
static int *oops_target;   /* NULL: the oops command's store faults */

static noinline void kjit_hazard_ra(void)
{
	recorded_ra = (unsigned long)__builtin_return_address(0);
	barrier();
}

noinline int kjit_hazard_entry(int what)
{
	int r = 0;

	if (what == 1)
		kjit_hazard_ra();
	if (what == 2)
		WARN_ON_ONCE(READ_ONCE(do_warn));
	if (what == 3)
		*READ_ONCE(oops_target) = what;
	barrier();
	return r + what;
}
EXPORT_SYMBOL_GPL(kjit_hazard_entry);

static int cmd_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "ra"))
		return kjit_hazard_entry(1) == 1 ? 0 : -EIO;
	if (sysfs_streq(val, "warn")) {
		WRITE_ONCE(do_warn, 1);
		return kjit_hazard_entry(2) == 2 ? 0 : -EIO;
	}
	if (sysfs_streq(val, "oops"))
		return kjit_hazard_entry(3) == 3 ? 0 : -EIO;
	return -EINVAL;
}
static const struct kernel_param_ops cmd_ops = { .set = cmd_set };
module_param_cb(cmd, &cmd_ops, NULL, 0200);

static int ra_get(char *buf, const struct kernel_param *kp)
{
	char sym[KSYM_SYMBOL_LEN];
	bool inside;

	sprint_symbol(sym, recorded_ra);
	inside = !strncmp(sym, "kjit_hazard_entry+", 18) && !strstr(sym, "[kjit]");
	return sysfs_emit(buf, "%s %lx %s\n", inside ? "ok" : "BAD", recorded_ra, sym);
}
static const struct kernel_param_ops ra_ops = { .get = ra_get };
module_param_cb(ra, &ra_ops, NULL, 0444);

static unsigned int hold_ms;
static bool text_mutex_held;

/* text_mutex is not exported: kallsyms_lookup_name (not exported in 6.1
 * either) is found through a kprobe on it, as kjit.ko finds it. */
static struct mutex *find_text_mutex(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long (*lookup)(const char *name);

	if (register_kprobe(&kp))
		return NULL;
	lookup = (void *)kp.addr;
	unregister_kprobe(&kp);
	return (struct mutex *)lookup("text_mutex");
}

static void hold_fn(struct work_struct *w)
{
	struct mutex *m = find_text_mutex();

	if (!m)
		return;
	mutex_lock(m);
	WRITE_ONCE(text_mutex_held, true);
	msleep(READ_ONCE(hold_ms));
	WRITE_ONCE(text_mutex_held, false);
	mutex_unlock(m);
}
static DECLARE_WORK(hold_work, hold_fn);

static int hold_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;

	if (kstrtouint(val, 0, &ms) || !ms || ms > 60000)
		return -EINVAL;
	if (work_pending(&hold_work) || READ_ONCE(text_mutex_held))
		return -EBUSY;
	WRITE_ONCE(hold_ms, ms);
	schedule_work(&hold_work);
	return 0;
}
static const struct kernel_param_ops hold_ops = { .set = hold_set };
module_param_cb(hold_text_mutex_ms, &hold_ops, NULL, 0200);
module_param(text_mutex_held, bool, 0444);

static int __init h_init(void) { return 0; }
static void __exit h_exit(void) { flush_work(&hold_work); }
module_init(h_init);
module_exit(h_exit);
MODULE_LICENSE("GPL");
