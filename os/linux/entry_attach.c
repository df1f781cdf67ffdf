// SPDX-License-Identifier: GPL-2.0
/* Attaching and detaching functions, and the entry layer's init and exit.
 * An attached function is entered by a direct call where possible
 * (entry_direct.c), else through one shared ftrace_ops with
 * SAVE_REGS|IPMODIFY whose func is entry_decide.c's kjit_ftrace_handler;
 * the attachments' records are attachments.c's.  Either path's requests
 * are one ftrace update each: attaching every system call is one, not
 * hundreds.  kjit_ops is registered while at least one address is in its
 * filter (an empty filter would mean "every function").
 *
 * Unload safety: no task can sleep with a code-cache address as its resume
 * point (translated calls push original return addresses and __schedule is
 * never translated, see shim.c), so after the ftrace ops are gone the
 * quiescence of quiesce.c (every task's stack, after an RCU grace period)
 * leaves the cache unused.
 *
 * Module functions: attached only while their module is LIVE, always
 * through kjit_ops, also in a request whose other functions go direct (a
 * direct ops cannot lose a function, entry_direct.c, and would keep a freed
 * module's ip), and detached by kjit_detach_module from
 * textwatch.c's notifier when the module goes, before its text is freed.
 * No module reference is taken: rmmod is never blocked by an attachment. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/ftrace.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>
#include "entry_attach.h"
#include "entry_decide.h"
#include "entry_direct.h"
#include "entry_policy.h"
#include "reclaim_work.h"
#include "attachments.h"
#include "cache_mem.h"
#include "quiesce.h"
#include "shim.h"
#include "symbols.h"
#include "fentry.h"
#include "uapi/kjit/ioctl.h"

static unsigned int max_attach = 1u << 17;
module_param(max_attach, uint, 0444);
MODULE_PARM_DESC(max_attach, "functions attached at most (131072; a kernel has ~50,000 with an fentry site)");

static bool direct_entry = true;
module_param(direct_entry, bool, 0444);
MODULE_PARM_DESC(direct_entry, "enter by an ftrace direct call where possible (1), "
		 "or always by the IPMODIFY ftrace_ops (0)");

/* The attachments and ftrace updates. */
static DEFINE_MUTEX(kjit_attach_mutex);

/* kjit_attach_mutex, and kjit_attach_owner (entry_policy.h) with it. */
static void attach_lock(void)
{
	mutex_lock(&kjit_attach_mutex);
	WRITE_ONCE(kjit_attach_owner, current);
}

static void attach_unlock(void)
{
	WRITE_ONCE(kjit_attach_owner, NULL);
	mutex_unlock(&kjit_attach_mutex);
}
static struct ftrace_ops kjit_ops;
static bool kjit_ops_registered;
/* Parking address: a rarely called traceable function kept in the filter
 * while the ops is registered, so that detaching the last function does not
 * need unregister_ftrace_function (an RCU-tasks wait, ~1 s under TCG): the
 * ops stays registered until unload and detach is one filter update.  The
 * handler ignores the parking address. */
static unsigned long kjit_park_ip;

static void ops_reinit(void)
{
	memset(&kjit_ops, 0, sizeof(kjit_ops));
	kjit_ops.func = kjit_ftrace_handler;
	/* No FTRACE_OPS_FL_RECURSION: the handler guards itself (see there). */
	kjit_ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY;
}

/* Checks the function at addr (0: no such name); 0 and its fentry site
 * in *site (what the attachment is keyed on), or -errno. */
static int check_addr(unsigned long addr, unsigned long *site)
{
	int state;

	if (!addr)
		return -ENOENT;
	state = kjit_shim_module_state(addr);
	if (state >= 0 && state != MODULE_STATE_LIVE)
		return -EAGAIN;          /* loading or unloading */
	if (!kjit_os_may_translate(addr))
		return -EPERM;
	*site = kjit_fentry_site(addr);
	if (!*site)
		return -EINVAL;          /* no fentry site at the entry */
	if (*site == kjit_park_ip)
		return -EBUSY;           /* kjit's parking address */
	if (kjit_att_find(*site))
		return -EEXIST;
	if (kjit_att_count() >= max_attach)
		return -ENOSPC;
	return 0;
}

/* Checks one name; 0 and its fentry site, or -errno. */
static int check_target(const char *name, unsigned long *site)
{
	return check_addr(kjit_ksym(name), site);
}

/* Adds `n` checked addresses to the filter and registers the ops if needed;
 * all or nothing. */
static int add_ips(unsigned long *ips, unsigned int n)
{
	int ret;

	ret = ftrace_set_filter_ips(&kjit_ops, ips, n, 0, 0);
	if (ret)
		goto undo;
	if (!kjit_ops_registered) {
		if (kjit_park_ip)
			ftrace_set_filter_ip(&kjit_ops, kjit_park_ip, 0, 0);
		ret = register_ftrace_function(&kjit_ops);
		if (ret)
			goto undo;
		kjit_ops_registered = true;
	}
	return 0;
undo:
	if (!kjit_ops_registered) {
		ftrace_free_filter(&kjit_ops);
		ops_reinit();
	} else {
		ftrace_set_filter_ips(&kjit_ops, ips, n, 1, 0);
	}
	return ret;
}

static void direct_emptied(bool emptied);

/* The core kernel's functions by a direct call where possible, module
 * functions (and the rest when direct entry is refused) by kjit_ops; all
 * or nothing.  direct[i] says how ips[i] is entered. */
static int attach_ips(const unsigned long *ips, unsigned int n, bool *direct)
{
	unsigned long *core, *rest;
	unsigned int i, ncore = 0, nrest = 0;
	bool emptied = false;
	int ret = -ENOMEM;

	core = kvmalloc_array(n, sizeof(*core), GFP_KERNEL);
	rest = kvmalloc_array(n, sizeof(*rest), GFP_KERNEL);
	if (!core || !rest)
		goto out;
	for (i = 0; i < n; i++) {
		direct[i] = READ_ONCE(direct_entry) && kjit_shim_module_state(ips[i]) < 0;
		if (direct[i])
			core[ncore++] = ips[i];
		else
			rest[nrest++] = ips[i];
	}
	if (ncore) {
		ret = kjit_direct_attach(core, ncore);
		if (ret) {
			pr_info("direct entry refused (%d) for %u functions: the IPMODIFY ops takes them\n",
				ret, ncore);
			memcpy(rest + nrest, core, ncore * sizeof(*core));
			nrest += ncore;
			ncore = 0;
			for (i = 0; i < n; i++)
				direct[i] = false;
		}
	}
	ret = nrest ? add_ips(rest, nrest) : 0;
	if (ret) {      /* undo the direct half */
		for (i = 0; i < ncore; i++)
			emptied |= kjit_direct_detach(core[i]);
		direct_emptied(emptied);
	}
out:
	kvfree(core);
	kvfree(rest);
	return ret;
}

int kjit_attach(const char *name, u64 *addr_out)
{
	struct kjit_attachment *a;
	unsigned long addr;
	bool direct = false;
	int ret;

	attach_lock();
	ret = check_target(name, &addr);
	if (!ret)
		ret = kjit_att_reserve(1);
	if (ret)
		goto out;
	a = kjit_att_new(name, addr);
	if (!a) {
		ret = -ENOMEM;
		goto out;
	}
	ret = attach_ips(&addr, 1, &direct);
	if (ret) {
		kjit_att_free(a);
		goto out;
	}
	a->direct = direct;
	kjit_att_append(a);
	*addr_out = kjit_fentry_func(addr);
	pr_info("attached to %s at %px\n", name, (void *)addr);
out:
	attach_unlock();
	return ret;
}

/* Checks at most this many names per call (`kjitctl list` asks for every
 * match of a glob). */
#define KJIT_MAX_CHECK (1u << 17)

int kjit_check_many(const char __user *names, s32 __user *results, u32 count)
{
	struct kjit_names b;
	int ret;
	u32 i;
	s32 r;

	if (!count || count > KJIT_MAX_CHECK)
		return -EINVAL;
	ret = kjit_names_get(&b, names, count);
	if (ret)
		return ret;
	attach_lock();
	for (i = 0; i < count; i++) {
		unsigned long site;

		r = kjit_names_at(&b, i)[0] ? check_addr(b.addrs[i], &site) : -EINVAL;
		if (put_user(r, &results[i])) {
			ret = -EFAULT;
			break;
		}
		if (!(i & 255))
			cond_resched();
	}
	attach_unlock();
	kjit_names_free(&b);
	return ret;
}

int kjit_attach_many(const char __user *names, s32 __user *results, u32 count)
{
	struct kjit_attachment **fresh = NULL;
	struct kjit_names b = {};
	unsigned long *ips = NULL;
	u32 *idx = NULL;
	int ret = 0, n = 0, i, r;
	bool *direct = NULL;

	if (!count || count > max_attach)
		return -EINVAL;
	ips = kvmalloc_array(count, sizeof(*ips), GFP_KERNEL);
	idx = kvmalloc_array(count, sizeof(*idx), GFP_KERNEL);
	fresh = kvmalloc_array(count, sizeof(*fresh), GFP_KERNEL);
	direct = kvmalloc_array(count, sizeof(*direct), GFP_KERNEL);
	if (!ips || !idx || !fresh || !direct) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = kjit_names_get(&b, names, count);
	if (ret)
		goto out_free;
	attach_lock();
	for (i = 0; i < count; i++) {
		unsigned long addr = 0;
		const char *name = kjit_names_at(&b, i);

		/* -EEXIST also for a name twice: the first one is hashed */
		r = name[0] ? check_addr(b.addrs[i], &addr) : -EINVAL;
		if (!r && kjit_att_count() + n >= max_attach)
			r = -ENOSPC;
		if (!r) {
			fresh[n] = kjit_att_new(name, addr);
			if (!fresh[n])
				r = -ENOMEM;
		}
		if (!r) {
			ips[n] = addr;
			idx[n] = i;
			n++;
		}
		if (put_user(r, results + i)) {
			ret = -EFAULT;
			goto out_undo;
		}
		if (!(i & 1023))
			cond_resched();
	}
	if (!n)
		goto out_unlock;
	ret = kjit_att_reserve(n);
	if (!ret)
		ret = attach_ips(ips, n, direct);
	if (ret) {
		for (i = 0; i < n; i++)
			if (put_user(ret, results + idx[i]))
				break;
		goto out_undo;
	}
	for (i = 0; i < n; i++) {
		fresh[i]->direct = direct[i];
		kjit_att_append(fresh[i]);
	}
	pr_info("attached %d functions (%u asked)\n", n, count);
	ret = n;
	goto out_unlock;
out_undo:
	for (i = 0; i < n; i++)
		kjit_att_free(fresh[i]);
out_unlock:
	attach_unlock();
out_free:
	kjit_names_free(&b);
	kvfree(ips);
	kvfree(idx);
	kvfree(fresh);
	kvfree(direct);
	return ret;
}

/* kjit_direct_release's take: ips go to kjit_ops (which shares a function
 * with a direct-call user) and their attachments say so. */
static int take_from_direct(unsigned long *ips, unsigned int n)
{
	struct kjit_attachment *a;
	unsigned int i;
	int ret = add_ips(ips, n);

	for (i = 0; !ret && i < n; i++) {
		a = kjit_att_find(ips[i]);
		if (a)
			a->direct = false;
	}
	return ret;
}

int kjit_entry_yield_direct(unsigned long func)
{
	unsigned long site = kjit_fentry_site(func);
	struct kjit_attachment *a;
	int ret;

	if (!site)
		return 0;
	attach_lock();
	ret = kjit_direct_release(site, take_from_direct);
	if (!ret)
		pr_info("gave %ps's direct call up to another user; its direct ops' functions are entered by the IPMODIFY ops\n",
			(void *)func);
	else if (ret != -ENOENT)
		pr_warn("could not give %ps's direct call up (%d): its direct-call user is refused\n",
			(void *)func, ret);
	a = kjit_att_find(site);
	if (ret == 0 || ret == -ENOENT)
		ret = a && !a->direct;
	attach_unlock();
	return ret;
}

bool kjit_entry_attached_site(unsigned long site)
{
	bool attached;

	attach_lock();
	attached = kjit_att_find(site) != NULL;
	attach_unlock();
	return attached;
}

/* The real unregistration (unload, or no parking address). */
static void unregister_ops_locked(void)
{
	if (kjit_ops_registered) {
		/* a module's (DYNAMIC) ops: this waits for RCU-tasks, so no CPU
		 * is left in the handler afterwards. */
		unregister_ftrace_function(&kjit_ops);
		kjit_ops_registered = false;
	}
	ftrace_free_filter(&kjit_ops);
	ops_reinit();
}

/* Direct ops emptied by a detach are unregistered once attach and detach
 * have been quiet this long (see entry_direct.c). */
#define KJIT_DIRECT_REAP_DELAY (2 * HZ)

static void kjit_direct_reap_fn(struct work_struct *w)
{
	attach_lock();
	kjit_direct_reap();
	attach_unlock();
}
static DECLARE_DELAYED_WORK(kjit_direct_reap_work, kjit_direct_reap_fn);

static void direct_emptied(bool emptied)
{
	if (emptied && READ_ONCE(kjit_entry_enabled))
		mod_delayed_work(system_wq, &kjit_direct_reap_work, KJIT_DIRECT_REAP_DELAY);
}

/* unload: every ops goes now; otherwise direct ops are parked. */
static void unregister_all_locked(bool unload)
{
	unsigned long *ips;
	int i, n = kjit_att_count();

	if (unload)
		kjit_direct_detach_all();
	if (!n)
		return;
	if (!unload)
		direct_emptied(kjit_direct_park_all());
	ips = kvmalloc_array(n, sizeof(*ips), GFP_KERNEL);
	if (kjit_park_ip && kjit_ops_registered && ips) {
		int m = 0;

		for (i = 0; i < n; i++)
			if (!kjit_att_at(i)->direct)
				ips[m++] = kjit_att_at(i)->addr;
		if (m && ftrace_set_filter_ips(&kjit_ops, ips, m, 1, 0))
			unregister_ops_locked();
	} else {
		unregister_ops_locked();
	}
	kvfree(ips);
	pr_info("detached from %d functions\n", n);
	kjit_att_clear();
}

/* How many attachments are entered through kjit_ops. */
static int ops_attached(void)
{
	int i, n = 0;

	for (i = 0; i < kjit_att_count(); i++)
		n += !kjit_att_at(i)->direct;
	return n;
}

/* Takes ips out of kjit_ops' filter.  Without a parking address the last
 * ones go with the ops itself: an empty filter would mean every function
 * (and ftrace refuses that to an IPMODIFY ops, -EINVAL). */
static int ops_remove(unsigned long *ips, int n)
{
	if (!kjit_park_ip && n == ops_attached()) {
		unregister_ops_locked();
		return 0;
	}
	return ftrace_set_filter_ips(&kjit_ops, ips, n, 1, 0);
}

/* Detaches attachment i (the last one takes its place); 0 or -errno. */
static int detach_at_locked(int i)
{
	struct kjit_attachment *a = kjit_att_at(i);
	int ret;

	if (a->direct) {
		direct_emptied(kjit_direct_detach(a->addr));
	} else {
		ret = ops_remove(&a->addr, 1);
		if (ret)
			return ret;
	}
	pr_info("detached from %s\n", a->name);
	kjit_att_remove(i);
	return 0;
}

int kjit_detach(const char *name)
{
	int i, ret = -ENOENT;

	attach_lock();
	if (!strcmp(name, "*")) {
		unregister_all_locked(false);
		ret = 0;
		goto out;
	}
	for (i = 0; i < kjit_att_count(); i++) {
		if (strcmp(kjit_att_at(i)->name, name))
			continue;
		ret = detach_at_locked(i);
		break;
	}
out:
	attach_unlock();
	return ret;
}

int kjit_detach_module(struct module *mod)
{
	unsigned long *ips;
	int i, n = 0, m = 0, ret = -ENOMEM;
	bool emptied = false;

	attach_lock();
	/* its kjit_ops functions leave the filter in one update */
	ips = kvmalloc_array(max(kjit_att_count(), 1), sizeof(*ips), GFP_KERNEL);
	for (i = 0; ips && i < kjit_att_count(); i++)
		if (!kjit_att_at(i)->direct && within_module(kjit_att_at(i)->addr, mod))
			ips[m++] = kjit_att_at(i)->addr;
	if (ips)
		ret = m ? ops_remove(ips, m) : 0;
	/* downwards: a removal moves the last record, already seen, to i */
	for (i = kjit_att_count() - 1; i >= 0; i--) {
		struct kjit_attachment *a = kjit_att_at(i);

		if (!within_module(a->addr, mod))
			continue;
		if (a->direct) {
			emptied |= kjit_direct_detach(a->addr);
		} else if (ret && ops_remove(&a->addr, 1)) {
			/* one at a time after the batch failed */
			pr_err("%s: cannot detach %s before its module goes\n", mod->name, a->name);
			continue;
		}
		kjit_att_remove(i);
		n++;
	}
	direct_emptied(emptied);
	attach_unlock();
	kvfree(ips);
	return n;
}

int kjit_nattached(void)
{
	return kjit_att_count();
}

/* Copies attachment i's name and address; false past the end. */
bool kjit_attachment(int i, char *name, u64 *addr)
{
	bool ok = false;

	attach_lock();
	if (i < kjit_att_count()) {
		strscpy(name, kjit_att_at(i)->name, KJIT_NAME_MAX);
		*addr = kjit_fentry_func(kjit_att_at(i)->addr);
		ok = true;
	}
	attach_unlock();
	return ok;
}

int kjit_entry_init(void (*direct_tramp)(void))
{
	int ret;

	ret = kjit_direct_init((unsigned long)direct_tramp);
	if (ret)
		return ret;
	{
		static const char *const park[] = { "__x64_sys_ni_syscall", "__ia32_sys_ni_syscall" };
		int i;

		for (i = 0; i < ARRAY_SIZE(park) && !kjit_park_ip; i++)
			kjit_park_ip = kjit_fentry_site(kjit_ksym(park[i]));
	}
	kjit_entry_set_park_ip(kjit_park_ip);
	ops_reinit();
	WRITE_ONCE(kjit_entry_enabled, true);
	return 0;
}

/* No task can be in the code cache after this unless something is attached
 * (see the comment at the top). */
void kjit_entry_quiesce(void)
{
	unsigned long lo, hi;

	kjit_mem_cache_range(&lo, &hi);
	kjit_quiesce_range(lo, hi);
}

static void kjit_detach_all(void)
{
	attach_lock();
	unregister_all_locked(true);
	unregister_ops_locked();
	attach_unlock();
	kjit_entry_quiesce();
}

void kjit_entry_exit(void)
{
	WRITE_ONCE(kjit_entry_enabled, false);
	kjit_detach_all();
	/* a detach that saw kjit_entry_enabled may have queued it before */
	cancel_delayed_work_sync(&kjit_direct_reap_work);
	kjit_reclaim_exit();
	kjit_direct_exit();
	kjit_att_exit();
}
