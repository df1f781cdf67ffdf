// SPDX-License-Identifier: GPL-2.0
/* /dev/kjit: the control device (ioctl ABI in include/uapi/kjit/ioctl.h).
 * Mode 0600 and CAP_SYS_ADMIN on open and on every ioctl.  The top layer:
 * each ioctl is one function that copies its arguments in, checks them,
 * calls the layer that does the work and copies the answer out. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/slab.h>
#include "control.h"
#include "builtin_tools.h"
#include "capture/capture.h"
#include "config.h"
#include "engine_host.h"
#include "entry_attach.h"
#include "entry_policy.h"
#include "entry_trampoline.h"
#include "kcov.h"
#include "extable.h"
#include "sched_resume.h"
#include "symbols.h"
#include "textwatch.h"
#include "kjit/engine.h"
#include "uapi/kjit/ioctl.h"

/* file->private_data: KJIT_SESSION when the file is a session
 * (KJIT_IOC_SESSION), else NULL. */
#define KJIT_SESSION ((void *)1)

static int kjit_ctl_open(struct inode *inode, struct file *file)
{
	file->private_data = NULL;
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

/* A session's close (its process may have been killed) detaches
 * everything: nothing stays attached to a recording nobody reads. */
static int kjit_ctl_release(struct inode *inode, struct file *file)
{
	int ret;

	if (file->private_data != KJIT_SESSION)
		return 0;
	ret = kjit_detach("*");
	kjit_config_clear_pid();
	if (ret && ret != -ENOENT)
		pr_warn("session close: detach all: %d\n", ret);
	else
		pr_info("session closed: everything detached, pid and task filters off\n");
	return 0;
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

static long ioc_attach(void __user *uarg)
{
	struct kjit_ioc_target t;
	int ret;

	ret = get_sized(&t, sizeof(t), uarg);
	if (ret)
		return ret;
	if (t.flags == KJIT_TARGET_SYSNR) {
		ret = kjit_syscall_name(t.addr, t.name, sizeof(t.name));
		if (ret)
			return ret;
	} else if (t.flags) {
		return -EINVAL;
	}
	if (!kjit_valid_name(t.name, sizeof(t.name)))
		return -EINVAL;
	t.addr = 0;
	ret = kjit_config_attach(t.name, &t.addr);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &t, sizeof(t)))
		return -EFAULT;
	return 0;
}

static long ioc_detach(void __user *uarg)
{
	struct kjit_ioc_target t;
	int ret;

	ret = get_sized(&t, sizeof(t), uarg);
	if (ret)
		return ret;
	if (t.flags)
		return -EINVAL;
	/* "*" detaches everything */
	if (!(strnlen(t.name, sizeof(t.name)) == 1 && t.name[0] == '*') &&
	    !kjit_valid_name(t.name, sizeof(t.name)))
		return -EINVAL;
	return kjit_detach(t.name);
}

static long ioc_attach_many(void __user *uarg)
{
	struct kjit_ioc_attach_many m;
	int ret;

	ret = get_sized(&m, sizeof(m), uarg);
	if (ret)
		return ret;
	return kjit_config_attach_many(u64_to_user_ptr(m.names), u64_to_user_ptr(m.results), m.count);
}

static long ioc_check_many(void __user *uarg)
{
	struct kjit_ioc_attach_many m;
	int ret;

	ret = get_sized(&m, sizeof(m), uarg);
	if (ret)
		return ret;
	return kjit_check_many(u64_to_user_ptr(m.names), u64_to_user_ptr(m.results), m.count);
}

static const struct file_operations kjit_ctl_fops;

/* Whether a native call's target is an operation of kjit's own devices. */
static bool own_device_op(unsigned long t)
{
	return t == (unsigned long)kjit_ctl_fops.open || t == (unsigned long)kjit_ctl_fops.release ||
	       t == (unsigned long)kjit_ctl_fops.unlocked_ioctl || t == (unsigned long)kjit_ctl_fops.compat_ioctl ||
	       kjit_kcov_is_device_op(t);
}

/* Of the native-call departures, the calls of kjit's own devices (made by
 * tasks whose system calls are attached) in *device; in *nested_call the
 * calls of kjit's direct trampoline, and in *nested_hooked the hooked
 * departures, at the fentry site of a function kjit has attached. */
static void own_departures(u64 *device, u64 *nested_call, u64 *nested_hooked)
{
	const u32 cap = 4096;
	struct kjit_departure_site *sites = kvmalloc_array(cap, sizeof(*sites), GFP_KERNEL);
	u32 n, i;

	*device = *nested_call = *nested_hooked = 0;
	if (!sites)
		return;
	n = min(kjit_engine_departure_sites(sites, cap), cap);
	for (i = 0; i < n; i++) {
		if (sites[i].why == KJIT_DEPART_HOOKED) {
			if (kjit_entry_attached_site(sites[i].target))
				*nested_hooked += sites[i].count;
			continue;
		}
		if (sites[i].why != KJIT_DEPART_NATIVE_CALL)
			continue;
		if (own_device_op(sites[i].target))
			*device += sites[i].count;
		else if (sites[i].target == (unsigned long)kjit_direct_tramp)
			*nested_call += sites[i].count;
	}
	kvfree(sites);
}

static void fill_departures(struct kjit_ioc_stats *s)
{
	struct kjit_engine_departures d;
	struct kjit_sleep_counters z;
	u64 device, nested_call, nested_hooked;

	kjit_engine_get_departures(&d);
	kjit_sleep_counters(&z);
	s->entered = d.entered + kjit_entry_fast_since_reset();
	s->completed = d.count[KJIT_DEPART_COMPLETED];
	own_departures(&device, &nested_call, &nested_hooked);
	s->kjit_control = min(device, d.count[KJIT_DEPART_NATIVE_CALL]);
	nested_call = min(nested_call, d.count[KJIT_DEPART_NATIVE_CALL] - s->kjit_control);
	s->left_native_call = d.count[KJIT_DEPART_NATIVE_CALL] - s->kjit_control - nested_call;
	s->left_native_insn = d.count[KJIT_DEPART_NATIVE_INSN];
	s->left_declined = d.count[KJIT_DEPART_DECLINED];
	s->left_cache_full = d.count[KJIT_DEPART_CACHE_FULL];
	nested_hooked = min(nested_hooked, d.count[KJIT_DEPART_HOOKED]);
	s->left_hooked = d.count[KJIT_DEPART_HOOKED] - nested_hooked + z.left_hooked;
	s->left_nested_entry = nested_call + nested_hooked;
	s->calls_declined_cache_full = d.declined_at_entry[KJIT_DEPART_CACHE_FULL];
	s->calls_declined_unbuilt = d.declined_at_entry[KJIT_DEPART_DECLINED];
	s->calls_declined_hooked = d.declined_at_entry[KJIT_DEPART_HOOKED];
	s->calls_declined_native = d.declined_at_entry[KJIT_DEPART_NATIVE_CALL] +
				   d.declined_at_entry[KJIT_DEPART_NATIVE_INSN];
	s->left_sleep_full = z.left_full;
	s->left_sleep_off = z.left_off;
	s->sleep_lost = z.lost;
	s->task_exits = z.task_exits;
	s->sleeps_followed = z.followed;
	s->sleeps_resumed = z.resumed;
	s->sleeping = z.sleeping;
}

static long ioc_stats(void __user *uarg)
{
	struct kjit_ioc_stats s;
	struct kjit_engine_stats es;
	struct kjit_entry_counters ec;
	struct kjit_ioc_config c;
	int ret;

	ret = get_sized(&s, sizeof(s), uarg);
	if (ret)
		return ret;
	memset(&s, 0, sizeof(s));
	memset(&es, 0, sizeof(es));
	kjit_engine_get_stats(&es);
	kjit_entry_counters(&ec);
	kjit_config_get(&c);
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
	s.fast_entries = ec.fast_entries;
	s.direct_ops = ec.direct_ops;
	s.entry_redirected = ec.redirected;
	s.entry_nested = ec.nested;
	kjit_entry_counters_since_reset(&ec);
	s.calls_entered = ec.entries;
	s.calls_declined = ec.entry_declined;
	s.calls_skipped = ec.entry_skipped;
	s.calls_nested = ec.nested;
	s.calls_redirected = ec.redirected;
	s.calls_filtered = ec.filtered;
	s.trace_fallthroughs = es.trace_fallthroughs;
	s.ibl_full = es.ibl_full;
	s.predicted_returns = es.predicted_returns;
	s.generations = es.generations;
	s.traces_retired = es.traces_retired;
	s.blocks_retired = es.blocks_retired;
	s.icount = kjit_tool_icount();
	kjit_extable_stats(&s.extable_mirrored, &s.extable_declined, &s.extable_entries);
	s.cache_size = kjit_host_cache_size();
	kjit_textwatch_stats(&s);
	s.tool = c.tool;
	s.pid = c.pid;
	s.inline_instrumentation = c.inline_instrumentation;
	s.use_liveness = c.use_liveness;
	s.flush_every_entry = c.flush_every_entry;
	fill_departures(&s);
	if (copy_to_user(uarg, &s, sizeof(s)))
		return -EFAULT;
	return 0;
}

static long ioc_config(void __user *uarg)
{
	struct kjit_ioc_config c;
	int ret;

	ret = get_sized(&c, sizeof(c), uarg);
	if (ret)
		return ret;
	return kjit_configure(&c);
}

static long ioc_results(void __user *uarg)
{
	struct kjit_ioc_results r;
	int ret;

	ret = get_sized(&r, sizeof(r), uarg);
	if (ret)
		return ret;
	if (r.nrec > (1u << 24))
		return -EINVAL;
	ret = kjit_config_results(&r);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &r, sizeof(r)))
		return -EFAULT;
	return 0;
}

/* Records (pc = address) of the attachments; nrec out = how many exist. */
static long ioc_list(void __user *uarg)
{
	struct kjit_ioc_results r;
	struct kjit_ioc_rec rec;
	struct kjit_ioc_rec __user *u;
	char *name;
	u64 addr, i;
	int ret;

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

/* Records (target, count, reason) of the engine's departure sites. */
static long ioc_departures(void __user *uarg)
{
	struct kjit_ioc_results r;
	struct kjit_departure_site *sites;
	struct kjit_ioc_rec __user *u;
	struct kjit_ioc_rec rec;
	u32 n, i, cap;
	int ret;

	ret = get_sized(&r, sizeof(r), uarg);
	if (ret)
		return ret;
	cap = min_t(u64, r.nrec, 4096);
	sites = kvmalloc_array(cap ? cap : 1, sizeof(*sites), GFP_KERNEL);
	if (!sites)
		return -ENOMEM;
	n = kjit_engine_departure_sites(sites, cap);
	u = u64_to_user_ptr(r.rec_ptr);
	for (i = 0; i < n && i < cap; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.pc = sites[i].target;
		rec.count = sites[i].count;
		rec.pid_type = sites[i].why;
		if (copy_to_user(&u[i], &rec, sizeof(rec))) {
			kvfree(sites);
			return -EFAULT;
		}
	}
	kvfree(sites);
	r.nrec = n;
	if (copy_to_user(uarg, &r, sizeof(r)))
		return -EFAULT;
	return 0;
}

static long ioc_flush(unsigned long arg)
{
	if (arg)
		return -EINVAL;
	return kjit_host_flush(true);
}

static long ioc_reset_results(unsigned long arg)
{
	if (arg)
		return -EINVAL;
	kjit_config_reset_results();
	return 0;
}

static long ioc_capture_start(void __user *uarg)
{
	struct kjit_ioc_capture c;
	int ret;

	ret = get_sized(&c, sizeof(c), uarg);
	if (ret)
		return ret;
	return kjit_capture_start(&c);
}

static long ioc_capture_stop(void)
{
	kjit_capture_stop();
	return 0;
}

static long ioc_capture_read(void __user *uarg)
{
	struct kjit_ioc_capture_read r;
	int ret;

	ret = get_sized(&r, sizeof(r), uarg);
	if (ret)
		return ret;
	return kjit_capture_read(&r, uarg);
}

static long ioc_version(void __user *uarg)
{
	struct kjit_ioc_version v;
	int ret;

	/* Any size: an older kjitctl's struct is answered with -EINVAL by
	 * get_sized and kjitctl says so. */
	ret = get_sized(&v, sizeof(v), uarg);
	if (ret)
		return ret;
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.abi = KJIT_ABI_VERSION;
	strscpy(v.version, KJIT_VERSION, sizeof(v.version));
	v.kaslr_offset = kjit_kaslr_offset();
	if (copy_to_user(uarg, &v, sizeof(v)))
		return -EFAULT;
	return 0;
}

static long ioc_session(struct file *file, unsigned long arg)
{
	if (arg)
		return -EINVAL;
	file->private_data = KJIT_SESSION;
	return 0;
}

static long kjit_ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	switch (cmd) {
	case KJIT_IOC_ATTACH:
		return ioc_attach(uarg);
	case KJIT_IOC_DETACH:
		return ioc_detach(uarg);
	case KJIT_IOC_ATTACH_MANY:
		return ioc_attach_many(uarg);
	case KJIT_IOC_STATS:
		return ioc_stats(uarg);
	case KJIT_IOC_CONFIG:
		return ioc_config(uarg);
	case KJIT_IOC_RESULTS:
		return ioc_results(uarg);
	case KJIT_IOC_LIST:
		return ioc_list(uarg);
	case KJIT_IOC_FLUSH:
		return ioc_flush(arg);
	case KJIT_IOC_DEPARTURES:
		return ioc_departures(uarg);
	case KJIT_IOC_RESET_RESULTS:
		return ioc_reset_results(arg);
	case KJIT_IOC_CAPTURE_START:
		return ioc_capture_start(uarg);
	case KJIT_IOC_CAPTURE_STOP:
		return ioc_capture_stop();
	case KJIT_IOC_CAPTURE_READ:
		return ioc_capture_read(uarg);
	case KJIT_IOC_VERSION:
		return ioc_version(uarg);
	case KJIT_IOC_SESSION:
		return ioc_session(file, arg);
	case KJIT_IOC_CHECK_MANY:
		return ioc_check_many(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations kjit_ctl_fops = {
	.owner = THIS_MODULE,
	.open = kjit_ctl_open,
	.release = kjit_ctl_release,
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
}
