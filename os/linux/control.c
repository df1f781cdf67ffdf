// SPDX-License-Identifier: GPL-2.0
/* /dev/kjit: the control device (ioctl ABI in uapi/kjit_ioctl.h).
 * Mode 0600 and CAP_SYS_ADMIN on open and on every ioctl. */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/slab.h>
#include "kjit_linux.h"
#include "kjit/engine.h"
#include "uapi/kjit_ioctl.h"
#include "capture.h"

static int kjit_ctl_open(struct inode *inode, struct file *file)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

/* Copies a struct that starts with `u32 size` from user space: the caller's
 * size must be exactly ours (the ABI grows by new ioctl numbers for now). */
static int get_sized(void *dst, size_t len, const void __user *src)
{
	u32 size;

	if (get_user(size, (const u32 __user *)src))
		return -EFAULT;
	if (size != len)
		return -EINVAL;
	if (copy_from_user(dst, src, len))
		return -EFAULT;
	return 0;
}

int kjit_valid_name(const char *name, size_t max)
{
	size_t i, n = strnlen(name, max);

	if (n == 0 || n == max)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum(name[i]) && name[i] != '_' && name[i] != '.')
			return 0;
	return 1;
}

static int valid_target(const char *name, size_t max, bool allow_star)
{
	if (allow_star && strnlen(name, max) == 1 && name[0] == '*')
		return 1;
	return kjit_valid_name(name, max);
}

static long kjit_ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;

	switch (cmd) {
	case KJIT_IOC_ATTACH:
	case KJIT_IOC_DETACH: {
		struct kjit_ioc_target t;

		ret = get_sized(&t, sizeof(t), uarg);
		if (ret)
			return ret;
		if (cmd == KJIT_IOC_ATTACH && t.flags == KJIT_TARGET_SYSNR) {
			ret = kjit_syscall_name(t.addr, t.name, sizeof(t.name));
			if (ret)
				return ret;
		} else if (t.flags) {
			return -EINVAL;
		}
		if (!valid_target(t.name, sizeof(t.name), cmd == KJIT_IOC_DETACH))
			return -EINVAL;
		if (cmd == KJIT_IOC_DETACH)
			return kjit_detach(t.name);
		t.addr = 0;
		ret = kjit_attach(t.name, &t.addr);
		if (ret)
			return ret;
		if (copy_to_user(uarg, &t, sizeof(t)))
			return -EFAULT;
		return 0;
	}
	case KJIT_IOC_ATTACH_MANY: {
		struct kjit_ioc_attach_many m;

		ret = get_sized(&m, sizeof(m), uarg);
		if (ret)
			return ret;
		return kjit_attach_many(u64_to_user_ptr(m.names), u64_to_user_ptr(m.results),
					m.count);
	}
	case KJIT_IOC_STATS: {
		struct kjit_ioc_stats s;
		struct kjit_engine_stats es;
		struct kjit_entry_counters ec;
		struct kjit_ioc_config c;

		ret = get_sized(&s, sizeof(s), uarg);
		if (ret)
			return ret;
		memset(&s, 0, sizeof(s));
		memset(&es, 0, sizeof(es));
		kjit_engine_get_stats(&es);
		kjit_entry_counters(&ec);
		kjit_tools_get_config(&c);
		s.size = sizeof(s);
		s.nattached = kjit_nattached();
		s.blocks_built = es.blocks_built;
		s.insns_translated = es.insns_translated;
		s.fallbacks = es.fallbacks;
		s.direct_links = es.direct_links;
		s.chain_links = es.chain_links;
		s.dispatcher_exits = es.dispatcher_exits;
		s.indirect_misses = es.indirect_misses;
		s.flushes = es.flushes;
		s.cache_bytes_used = es.cache_bytes_used;
		s.arena_bytes_used = es.arena_bytes_used;
		s.inlined_calls = es.inlined_calls;
		s.outlined_calls = es.outlined_calls;
		s.stop_addresses = es.stop_addresses;
		s.entries = ec.entries;
		s.entry_declined = ec.entry_declined;
		s.entry_skipped = ec.entry_skipped;
		s.gate_escapes = ec.gate_escapes;
		s.reclaims = ec.reclaims;
		s.filtered = ec.filtered;
		s.exits = ec.exits;
		s.icount = kjit_tools_icount();
		kjit_extable_stats(&s.extable_mirrored, &s.extable_declined, &s.extable_entries);
		s.cache_size = kjit_tool.cache_size;
		kjit_textwatch_stats(&s.text_events, &s.text_flushes);
		s.tool = c.tool;
		s.pid = c.pid;
		s.inline_instrumentation = c.inline_instrumentation;
		s.use_liveness = c.use_liveness;
		s.flush_every_entry = c.flush_every_entry;
		if (copy_to_user(uarg, &s, sizeof(s)))
			return -EFAULT;
		return 0;
	}
	case KJIT_IOC_CONFIG: {
		struct kjit_ioc_config c;

		ret = get_sized(&c, sizeof(c), uarg);
		if (ret)
			return ret;
		return kjit_tools_configure(&c);
	}
	case KJIT_IOC_RESULTS: {
		struct kjit_ioc_results r;

		ret = get_sized(&r, sizeof(r), uarg);
		if (ret)
			return ret;
		if (r.nrec > (1u << 24))
			return -EINVAL;
		ret = kjit_tools_results(&r);
		if (ret)
			return ret;
		if (copy_to_user(uarg, &r, sizeof(r)))
			return -EFAULT;
		return 0;
	}
	case KJIT_IOC_LIST: {
		struct kjit_ioc_results r;
		struct kjit_ioc_rec rec;
		struct kjit_ioc_rec __user *u;
		char *name;
		u64 addr, i;

		ret = get_sized(&r, sizeof(r), uarg);
		if (ret)
			return ret;
		u = u64_to_user_ptr(r.rec_ptr);
		name = kmalloc(KJIT_NAME_MAX, GFP_KERNEL);
		if (!name)
			return -ENOMEM;
		for (i = 0; kjit_attachment(i, name, &addr); i++) {
			if (i < r.nrec) {
				memset(&rec, 0, sizeof(rec));
				rec.pc = addr;
				if (copy_to_user(&u[i], &rec, sizeof(rec))) {
					kfree(name);
					return -EFAULT;
				}
			}
		}
		kfree(name);
		r.nrec = i;
		if (copy_to_user(uarg, &r, sizeof(r)))
			return -EFAULT;
		return 0;
	}
	case KJIT_IOC_FLUSH:
		if (arg)
			return -EINVAL;
		return kjit_tools_flush(true);
	case KJIT_IOC_ICOUNT_RESET:
		if (arg)
			return -EINVAL;
		kjit_tools_reset();
		return 0;
	case KJIT_IOC_CAPTURE_START:
	case KJIT_IOC_CAPTURE_STOP:
	case KJIT_IOC_CAPTURE_READ:
		return kjit_capture_ioctl(cmd, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations kjit_ctl_fops = {
	.owner = THIS_MODULE,
	.open = kjit_ctl_open,
	.unlocked_ioctl = kjit_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice kjit_ctl_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kjit",
	.fops = &kjit_ctl_fops,
	.mode = 0600,
};

int kjit_control_init(void)
{
	return misc_register(&kjit_ctl_dev);
}

void kjit_control_exit(void)
{
	misc_deregister(&kjit_ctl_dev);
	kjit_capture_exit();
}
