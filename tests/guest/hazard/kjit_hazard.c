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
 * Results: parameters/ra ("ok <addr> <sym>" or "BAD ..."). */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kallsyms.h>
#include <linux/bug.h>

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

static int __init h_init(void) { return 0; }
static void __exit h_exit(void) { }
module_init(h_init);
module_exit(h_exit);
MODULE_LICENSE("GPL");
