// SPDX-License-Identifier: GPL-2.0
/* Exception-table mirroring for the code cache.
 *
 * A user access (copy_from_user, __get_user_*, ...) that faults by design is
 * found by the fault handler through search_exception_tables(ip).  For an ip
 * in the code cache that search goes to __module_address(ip) = THIS module
 * and bsearches THIS_MODULE->extable[0..num_exentries).  So the module's
 * extable is replaced by a dynamic one: the module's own entries plus one
 * entry per mirrored cache site, whose type/data are copied and whose fixup
 * is the engine's exit toward the translation of the original fixup: the
 * fault goes on in the cache, with exactly the registers and stack the
 * native code would have (translated code keeps them identical at the
 * copied instruction).  When the engine passes no fixup, it is the ORIGINAL
 * fixup address and execution continues natively.
 *
 * Lock-free for readers (search_module_extables runs under preempt_disable,
 * i.e. an RCU read side):
 *  - num_exentries is set once to KJIT_EXT_CAP and never changes; slots
 *    after the real entries hold a sentinel whose address (end of this
 *    module's core image) is above every real entry and never faults, so
 *    every table a reader can see is sorted and complete;
 *  - an entry above all real ones is appended in place: fixup and data
 *    first, then (after smp_wmb) the 4-byte insn field of the first sentinel
 *    slot; the table is sorted at every instant;
 *  - anything else (an insertion in the middle, dropping stale entries)
 *    builds the other buffer and publishes it with one pointer store; a
 *    buffer is rebuilt only after an RCU grace period since it was last
 *    published (poll_state_synchronize_rcu); if that grace period has not
 *    elapsed the mirror request is refused for now (-1) and the engine
 *    declines the block this once (the task continues natively, counted)
 *    and builds it again the next time it is needed.
 *
 * Everything here that runs under the engine lock takes no kernel lock and
 * wakes no task.  The engine lock is innermost: translated code on another
 * CPU may hold any kernel lock (an rq lock, an rcu_node lock, a timer base)
 * and spin for the engine lock at a dispatcher gate, so taking one of those
 * under it deadlocks both CPUs with interrupts off.  That is why the grace
 * period cookie comes from get_state_synchronize_rcu(), a plain read, and
 * the grace period itself is started by the retire path after it has
 * dropped the engine lock (start_poll_synchronize_rcu locks an rcu_node and
 * may wake the grace-period kthread).
 * Both buffers are in this module's .bss: entries are 32-bit relative, so the
 * table must be within +/-2 GiB of kernel text and of the cache.
 *
 * Every mutation happens under the engine lock (mirror and code_written are
 * called by the engine with it held) or with the engine idle (init, reset,
 * exit).  Stale entries (cache code overwritten after a flush) are marked
 * when the engine rewrites their addresses and dropped at the next rebuild;
 * a stale entry can only matter to a genuine (non-user-access) fault at an
 * address that now holds other code.  An entry mirrored again at the same
 * copy address is updated in place: neither the old code (quiesced before
 * its epoch was reused) nor the new one (not linked yet) can be running. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/extable.h>
#include <linux/rcupdate.h>
#include <linux/bitfield.h>
#include <asm/extable.h>
#include <asm/extable_fixup_types.h>
#include "extable.h"
#include "kjit/os_shim.h"
#include "cache_mem.h"
#include "symbols.h"

#define KJIT_EXT_CAP 4096

struct shadow {
	unsigned long insn, fixup;
	int data;
	bool stale, pending;
};

static struct exception_table_entry ext_buf[2][KJIT_EXT_CAP];
static struct shadow sh[KJIT_EXT_CAP];
static unsigned int nsh;          /* real entries, sorted by insn        */
static unsigned int pub;          /* index of the published buffer       */
static unsigned long gp_cookie[2]; /* RCU state when a buffer was retired */
static bool cookie_valid[2];
static unsigned long sentinel;
static struct exception_table_entry *orig_extable;
static unsigned int orig_num;
static bool active;
static const struct exception_table_entry *(*p_search)(unsigned long addr);
static u64 st_mirrored, st_declined;

static void encode(struct exception_table_entry *e, unsigned long insn, unsigned long fixup,
		   int data)
{
	e->fixup = (int)(long)(fixup - (unsigned long)&e->fixup);
	e->data = data;
	e->insn = (int)(long)(insn - (unsigned long)&e->insn);
}

static void build(unsigned int b)
{
	unsigned int i;

	for (i = 0; i < nsh; i++)
		encode(&ext_buf[b][i], sh[i].insn, sh[i].fixup, sh[i].data);
	for (; i < KJIT_EXT_CAP; i++)
		encode(&ext_buf[b][i], sentinel, sentinel, 0);
}

static bool other_free(void)
{
	unsigned int o = pub ^ 1;

	return !cookie_valid[o] || poll_state_synchronize_rcu(gp_cookie[o]);
}

/* Drops stale entries from the shadow and publishes the other buffer; the
 * one it replaces is reusable after a full grace period from now. */
static void rebuild_publish(void)
{
	unsigned int i, j, o = pub ^ 1;

	for (i = j = 0; i < nsh; i++)
		if (!sh[i].stale)
			sh[j++] = sh[i];
	nsh = j;
	build(o);
	smp_wmb();
	WRITE_ONCE(THIS_MODULE->extable, ext_buf[o]);
	gp_cookie[pub] = get_state_synchronize_rcu();
	cookie_valid[pub] = true;
	pub = o;
}

int kjit_extable_init(void)
{
	struct module *m = THIS_MODULE;
	unsigned int i;

	p_search = (void *)kjit_ksym("search_exception_tables");
	if (!p_search)
		return -ENOENT;
	sentinel = (unsigned long)m->core_layout.base + m->core_layout.size;
	orig_extable = m->extable;
	orig_num = m->num_exentries;
	if (orig_num > KJIT_EXT_CAP / 2)
		return -E2BIG;
	nsh = 0;
	for (i = 0; i < orig_num; i++) {     /* already sorted by the loader */
		const struct exception_table_entry *e = &orig_extable[i];

		sh[nsh].insn = (unsigned long)&e->insn + e->insn;
		sh[nsh].fixup = (unsigned long)&e->fixup + e->fixup;
		sh[nsh].data = e->data;
		sh[nsh].stale = sh[nsh].pending = false;
		nsh++;
	}
	pub = 0;
	build(0);
	build(1);
	/* Nothing of this module can fault before init returns: no lookup is
	 * concurrent with the switch. */
	smp_wmb();
	WRITE_ONCE(m->extable, ext_buf[0]);
	WRITE_ONCE(m->num_exentries, KJIT_EXT_CAP);
	active = true;
	pr_info("dynamic extable: %u own entries, capacity %u\n", orig_num, KJIT_EXT_CAP);
	return 0;
}

void kjit_extable_exit(void)
{
	if (!active)
		return;
	WRITE_ONCE(THIS_MODULE->num_exentries, orig_num);
	smp_wmb();
	WRITE_ONCE(THIS_MODULE->extable, orig_extable);
	active = false;
}

/* Engine re-created: every cache entry is stale (the cache is quiesced). */
void kjit_extable_reset(void)
{
	unsigned int i;

	for (i = 0; i < nsh; i++)
		if (kjit_mem_is_cache(sh[i].insn))
			sh[i].stale = true;
}

/* Writes entry i of the published buffer in place, fixup and data before
 * the address (a reader that finds the address sees the rest), and its
 * shadow.  The caller has checked that no reader can be looking for what
 * the slot held. */
static void publish_in_place(unsigned int i, unsigned long copy, unsigned long fixup, int data)
{
	struct exception_table_entry *x = &ext_buf[pub][i];

	x->fixup = (int)(long)(fixup - (unsigned long)&x->fixup);
	x->data = data;
	smp_wmb();
	WRITE_ONCE(x->insn, (int)(long)(copy - (unsigned long)&x->insn));
	sh[i].insn = copy;
	sh[i].fixup = fixup;
	sh[i].data = data;
	sh[i].stale = false;
	sh[i].pending = true;
}

/* An entry below the top whose slot, and every slot above it, holds a
 * stale entry (code of an epoch that is being reused, whose entries could
 * not be dropped yet because a rebuild waits for a grace period): it takes
 * the slot in place, like an append.  The table stays sorted (the slot's old
 * address was above `copy`, the ones above it are higher still), readers
 * looking for a live address never land on it, and nothing faults at
 * `copy` before the engine publishes the code there. */
static bool reuse_stale_slot(unsigned int lo, unsigned long copy, unsigned long fixup, int data)
{
	struct exception_table_entry *x = &ext_buf[pub][lo];
	unsigned int i;

	for (i = lo; i < nsh; i++)
		if (!sh[i].stale)
			return false;
	if ((unsigned long)&x->insn + x->insn != sh[lo].insn)
		return false;
	publish_in_place(lo, copy, fixup, data);
	return true;
}

/* Every handler of this kernel ends by jumping to the fixup
 * (ex_handler_default), except BPF's, whose fixup field encodes a register
 * and a length (and whose sites are in BPF programs, never translated). */
uint64_t kjit_os_extable_fixup(uint64_t addr)
{
	const struct exception_table_entry *e;

	if (!active)
		return 0;
	e = p_search((unsigned long)addr);
	if (!e || FIELD_GET(EX_DATA_TYPE_MASK, e->data) == EX_TYPE_BPF)
		return 0;
	return (unsigned long)&e->fixup + e->fixup;
}

int kjit_os_mirror_extable(uint64_t orig_addr, uint64_t copy_addr, uint64_t fixup_addr)
{
	const struct exception_table_entry *e;
	unsigned long fixup, copy = (unsigned long)copy_addr;
	int data;
	unsigned int lo, hi, i;

	if (!active || !kjit_mem_is_cache(copy) || (fixup_addr && !kjit_mem_is_cache(fixup_addr)))
		goto decline;
	e = p_search((unsigned long)orig_addr);
	if (!e)
		goto decline;
	fixup = fixup_addr ? (unsigned long)fixup_addr : (unsigned long)&e->fixup + e->fixup;
	data = e->data;
	/* The fixup must be reachable rel32 from our table (kernel or module
	 * text is; anything else is declined). */
	if ((long)(fixup - (unsigned long)ext_buf) != (long)(int)(long)(fixup - (unsigned long)ext_buf))
		goto decline;

	lo = 0;
	hi = nsh;
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (sh[mid].insn < copy)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nsh && sh[lo].insn == copy) {
		/* Same copy address again (epoch reused): update in place in
		 * both buffers; nothing can be executing at `copy` now. */
		sh[lo].fixup = fixup;
		sh[lo].data = data;
		sh[lo].stale = false;
		sh[lo].pending = true;
		for (i = 0; i < 2; i++) {
			struct exception_table_entry *x = &ext_buf[i][lo];

			if ((unsigned long)&x->insn + x->insn == copy) {
				x->fixup = (int)(long)(fixup - (unsigned long)&x->fixup);
				x->data = data;
			}
		}
		goto ok;
	}
	if (nsh >= KJIT_EXT_CAP - 1) {
		if (!other_free())
			goto busy;
		rebuild_publish();           /* drops stale ones */
		if (nsh >= KJIT_EXT_CAP - 1)
			goto decline;
		return kjit_os_mirror_extable(orig_addr, copy_addr, fixup_addr);
	}
	if (lo == nsh) {
		/* Above every real entry: append in place into the published
		 * buffer (the other one is rebuilt in full before its use); the
		 * slot held the sentinel, which no reader looks for. */
		publish_in_place(nsh, copy, fixup, data);
		nsh++;
		goto ok;
	}
	if (reuse_stale_slot(lo, copy, fixup, data))
		goto ok;
	if (!other_free())
		goto busy;
	memmove(&sh[lo + 1], &sh[lo], (nsh - lo) * sizeof(sh[0]));
	sh[lo].insn = copy;
	sh[lo].fixup = fixup;
	sh[lo].data = data;
	sh[lo].stale = false;
	sh[lo].pending = true;
	nsh++;
	rebuild_publish();
ok:
	st_mirrored++;
	return 1;
decline:
	st_declined++;
	return 0;
busy:
	/* Only until the grace period has passed: the engine builds the block
	 * again next time instead of leaving the site native for good. */
	st_declined++;
	return -1;
}

/* The engine (re)wrote [addr, addr+len): entries there that were not just
 * mirrored for this code are stale. */
void kjit_extable_code_written(unsigned long addr, unsigned long len)
{
	unsigned int i;

	if (!active)
		return;
	for (i = 0; i < nsh; i++) {
		if (sh[i].insn < addr)
			continue;
		if (sh[i].insn >= addr + len)
			break;
		if (sh[i].pending)
			sh[i].pending = false;
		else
			sh[i].stale = true;
	}
}

/* [lo, hi) of the cache was quiesced: no CPU runs code there and nothing
 * links into it until it is rewritten, so its entries can go now.  Dropping
 * them at once matters: left in the table they sit above the code of the
 * new epoch, every mirror there becomes a mid-table insertion that needs a
 * rebuild, and a second rebuild within one RCU grace period is declined
 * (the task leaves the cache before the site).  Engine lock held; the
 * caller starts a grace period once it has dropped it. */
void kjit_extable_retire(unsigned long lo, unsigned long hi)
{
	unsigned int i;
	bool any = false;

	if (!active)
		return;
	for (i = 0; i < nsh; i++) {
		if (sh[i].insn >= lo && sh[i].insn < hi && !sh[i].stale) {
			sh[i].stale = true;
			any = true;
		}
	}
	if (any && other_free())
		rebuild_publish();
}

void kjit_extable_stats(u64 *mirrored, u64 *declined, u64 *entries)
{
	*mirrored = st_mirrored;
	*declined = st_declined;
	*entries = nsh;
}
