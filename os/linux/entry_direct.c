// SPDX-License-Identifier: GPL-2.0
/* Entry by a direct call (see entry_direct.h).
 *
 * On 6.1 a registered direct ops cannot gain or lose a function: ftrace
 * records the direct target per ip (direct_functions) only when the ops is
 * registered, and removes only the ips the ops' filter still holds when it
 * is unregistered.  So each attach request gets its own ops, and detaching
 * a function of a request that still has others attached only marks it
 * detached in entry_table.c, whose slow path then returns to the original
 * code.  An ops whose functions are all detached stays registered too, until
 * kjit_direct_reap or unload: unregistering a module's ops waits for
 * RCU-tasks (about a second under TCG, milliseconds to seconds on hardware),
 * and a tool that attaches and detaches in a loop would pay it every time;
 * attaching one of its functions again revives it instead.  Another direct
 * user is refused a function an ops holds (-EBUSY): a BPF trampoline is not,
 * because direct_yield.c gives the whole ops up first (kjit_direct_release),
 * its attached functions moving to the IPMODIFY ops, which shares them with
 * BPF.  After the unregistration nobody is left in the trampoline.
 *
 * An IPMODIFY user (livepatch) may share a function with the ops
 * (ops_func): ftrace then calls its handler and enters the trampoline with
 * [rsp] = the ip the handler chose, the replacement function, which is not
 * an attached ip5: the slow path sends the task there natively and counts
 * it (entry_redirected).  Without ops_func, loading a livepatch for an
 * attached function would fail with -EBUSY. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/ftrace.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/hashtable.h>
#include "entry_direct.h"
#include "entry_table.h"
#include "compat.h"

/* Ops registered at most; a request beyond goes to the IPMODIFY ops. */
#define KJIT_DIRECT_OPS 1024

/* One function of a batch, hashed by address: attaching tens of thousands
 * asks for each function's batch. */
struct direct_fn {
	struct hlist_node node;
	unsigned long ip;
	struct direct_batch *batch;
};

struct direct_batch {
	struct ftrace_ops ops;
	struct direct_fn *fns;       /* its functions */
	unsigned int n, live;        /* how many, how many still attached */
	bool registered;
};

static struct direct_batch *batches;
static DEFINE_HASHTABLE(fn_hash, 14);
static unsigned long tramp_addr;
static unsigned int nregistered;

int kjit_direct_init(unsigned long tramp)
{
	batches = vzalloc(sizeof(*batches) * KJIT_DIRECT_OPS);
	if (!batches)
		return -ENOMEM;
	tramp_addr = tramp;
	kjit_entry_table_clear();
	return 0;
}

/* The registered batch holding ip, or NULL. */
static struct direct_batch *batch_of(unsigned long ip)
{
	struct direct_fn *f;

	hash_for_each_possible(fn_hash, f, node, ip)
		if (f->ip == ip)
			return f->batch;
	return NULL;
}

static void unregister_batch(struct direct_batch *b)
{
	int ret = kjit_unregister_ftrace_direct(&b->ops, tramp_addr);
	unsigned int i;

	if (ret)
		pr_err("unregister_ftrace_direct: %d\n", ret);
	ftrace_free_filter(&b->ops);
	for (i = 0; i < b->n; i++)
		hash_del(&b->fns[i].node);
	kvfree(b->fns);
	memset(b, 0, sizeof(*b));
	WRITE_ONCE(nregistered, nregistered - 1);
	if (!nregistered)
		kjit_entry_table_clear();   /* no ops calls the trampoline any more */
}

static int share_with_ipmodify(struct ftrace_ops *ops, enum ftrace_ops_cmd cmd)
{
	return 0;   /* every command: the trampoline copes with a changed ip */
}

static struct direct_batch *free_batch(void)
{
	unsigned int b;

	for (b = 0; b < KJIT_DIRECT_OPS; b++)
		if (!batches[b].registered)
			return &batches[b];
	return NULL;
}

int kjit_direct_attach(const unsigned long *ips, unsigned int n)
{
	struct direct_batch *b = NULL, *old;
	unsigned long *fresh = NULL, *revived = NULL;
	struct direct_fn *fns = NULL;
	unsigned int i, j, nfresh = 0, nrevived = 0;
	int ret = 0;

	if (!tramp_addr)
		return -EOPNOTSUPP;
	fresh = kvmalloc_array(n, sizeof(*fresh), GFP_KERNEL);
	revived = kvmalloc_array(n, sizeof(*revived), GFP_KERNEL);
	if (!fresh || !revived) {
		ret = -ENOMEM;
		goto out;
	}
	/* A function detached from a batch that is still registered is still
	 * called through the trampoline: it is revived, not registered again. */
	for (i = 0; i < n && !ret; i++) {
		old = batch_of(ips[i]);
		if (!old) {
			fresh[nfresh++] = ips[i];
		} else if (kjit_entry_table_attached(ips[i] + MCOUNT_INSN_SIZE)) {
			ret = -EEXIST;
		} else if (!kjit_entry_table_attach(ips[i] + MCOUNT_INSN_SIZE)) {
			ret = -ENOSPC;
		} else {
			old->live++;
			revived[nrevived++] = ips[i];
		}
	}
	if (ret || !nfresh)
		goto out;
	b = free_batch();
	if (!b) {
		kjit_direct_reap();   /* parked ops hold every batch */
		b = free_batch();
	}
	ret = -ENOSPC;
	if (!b)
		goto out;
	ret = -ENOMEM;
	fns = kvmalloc_array(nfresh, sizeof(*fns), GFP_KERNEL);
	if (!fns)
		goto out;
	for (i = 0; i < nfresh; i++)
		if (!kjit_entry_table_attach(fresh[i] + MCOUNT_INSN_SIZE))
			break;
	b->ops.ops_func = share_with_ipmodify;
	ret = i < nfresh ? -ENOSPC : ftrace_set_filter_ips(&b->ops, fresh, nfresh, 0, 0);
	if (!ret)
		ret = kjit_register_ftrace_direct(&b->ops, tramp_addr);
	if (ret) {
		for (j = 0; j < i; j++)
			kjit_entry_table_detach(fresh[j] + MCOUNT_INSN_SIZE);
		ftrace_free_filter(&b->ops);
		memset(&b->ops, 0, sizeof(b->ops));
		goto out;
	}
	for (i = 0; i < nfresh; i++) {
		fns[i].ip = fresh[i];
		fns[i].batch = b;
		hash_add(fn_hash, &fns[i].node, fresh[i]);
	}
	b->fns = fns;
	fns = NULL;
	b->n = b->live = nfresh;
	b->registered = true;
	WRITE_ONCE(nregistered, nregistered + 1);
out:
	/* all or none: undo this request's revivals (their batches had other
	 * live functions, so none of them empties) */
	for (i = 0; ret && i < nrevived; i++) {
		kjit_entry_table_detach(revived[i] + MCOUNT_INSN_SIZE);
		batch_of(revived[i])->live--;
	}
	kvfree(fns);
	kvfree(fresh);
	kvfree(revived);
	return ret;
}

bool kjit_direct_detach(unsigned long ip)
{
	struct direct_batch *b = batch_of(ip);

	if (!b || !kjit_entry_table_attached(ip + MCOUNT_INSN_SIZE))
		return false;
	kjit_entry_table_detach(ip + MCOUNT_INSN_SIZE);
	return !--b->live;
}

bool kjit_direct_park_all(void)
{
	unsigned int b, i;
	bool emptied = false;

	for (b = 0; batches && b < KJIT_DIRECT_OPS; b++) {
		if (!batches[b].registered || !batches[b].live)
			continue;
		for (i = 0; i < batches[b].n; i++)
			kjit_entry_table_detach(batches[b].fns[i].ip + MCOUNT_INSN_SIZE);
		batches[b].live = 0;
		emptied = true;
	}
	return emptied;
}

int kjit_direct_release(unsigned long ip, int (*take)(unsigned long *ips, unsigned int n))
{
	struct direct_batch *b = batch_of(ip);
	unsigned long *live;
	unsigned int i, n = 0;
	int ret;

	if (!b)
		return -ENOENT;
	live = kvmalloc_array(b->n, sizeof(*live), GFP_KERNEL);
	if (!live)
		return -ENOMEM;
	for (i = 0; i < b->n; i++)
		if (kjit_entry_table_attached(b->fns[i].ip + MCOUNT_INSN_SIZE))
			live[n++] = b->fns[i].ip;
	/* Both ways in until the ops goes: an entry the new way redirected
	 * reaches the trampoline with a cache address, which it follows
	 * (counted as redirected); none runs uncounted. */
	ret = n ? take(live, n) : 0;
	if (!ret) {
		for (i = 0; i < n; i++)
			kjit_entry_table_detach(live[i] + MCOUNT_INSN_SIZE);
		unregister_batch(b);
	}
	kvfree(live);
	return ret;
}

void kjit_direct_reap(void)
{
	unsigned int b;

	for (b = 0; batches && b < KJIT_DIRECT_OPS; b++)
		if (batches[b].registered && !batches[b].live)
			unregister_batch(&batches[b]);
}

void kjit_direct_detach_all(void)
{
	unsigned int b;

	for (b = 0; batches && b < KJIT_DIRECT_OPS; b++)
		if (batches[b].registered)
			unregister_batch(&batches[b]);
}

unsigned int kjit_direct_nops(void)
{
	return READ_ONCE(nregistered);
}

void kjit_direct_exit(void)
{
	kjit_direct_detach_all();
	vfree(batches);
	batches = NULL;
}
