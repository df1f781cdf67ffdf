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
 * Layout.  THIS_MODULE->extable holds, sorted by address: the module's own
 * entries, and one region of KJIT_EXT_REGION slots per cache half (per
 * engine epoch, kjit_engine_epoch_range), each holding that half's real
 * entries followed by sentinels at the half's last byte.  The engine
 * bump-allocates code within a half, so a new site is above every live
 * site of its half: it is appended in place, or it takes in place the slot
 * of a stale entry left by the half's previous use (every slot above holds
 * one too).  Neither needs a new table, so a half being refilled after a
 * flush never waits for a grace period, whatever the other half holds.  A
 * sentinel's address is the last byte of its half, where no copied
 * instruction starts (every block ends with a jump after its copied
 * instructions); it is above every entry of its half and below everything
 * after it.
 *
 * Lock-free for readers (search_module_extables runs under preempt_disable,
 * i.e. an RCU read side):
 *  - num_exentries is set once and never changes, and every table a reader
 *    can see is sorted and complete: an in-place write replaces a sentinel
 *    or a stale entry with an address between its neighbours, fixup and
 *    data first, then (after smp_wmb) the 4-byte insn field;
 *  - anything else (an insertion below a live entry, dropping stale entries,
 *    a new layout) builds the other buffer and publishes it with one
 *    pointer store; a buffer is rebuilt only after an RCU grace period since
 *    it was last published (poll_state_synchronize_rcu); if that grace
 *    period has not elapsed the mirror request is refused for now (-1) and
 *    the engine declines the block this once (the task continues natively,
 *    counted) and builds it again the next time it is needed.  With one
 *    region per half this path is only taken when a region is full.
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
 * layout, exit).  Stale entries (cache code overwritten after a flush) are
 * marked when the engine rewrites their addresses and dropped at the next
 * rebuild; a stale entry can only matter to a genuine (non-user-access)
 * fault at an address that now holds other code.  An entry mirrored again
 * at the same copy address is updated in place: neither the old code
 * (quiesced before its epoch was reused) nor the new one (not linked yet)
 * can be running. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/extable.h>
#include <linux/rcupdate.h>
#include <linux/bitfield.h>
#include <asm/extable.h>
#include <asm/extable_fixup_types.h>
#include "extable.h"
#include "compat.h"
#include "kjit/os_shim.h"
#include "cache_mem.h"
#include "symbols.h"

#define KJIT_EXT_REGION 4096     /* mirrored sites per cache half */
#define KJIT_EXT_OWN_MAX 1024    /* the module's own entries */
#define KJIT_EXT_SLOTS (KJIT_EXT_OWN_MAX + 2 * KJIT_EXT_REGION)

struct shadow {
	unsigned long insn, fixup;
	int data;
	bool stale, pending;
};

/* A cache half's slots [first, first + KJIT_EXT_REGION) of both buffers:
 * its n real entries, sorted, then sentinels at hi - 1. */
struct region {
	unsigned long lo, hi;
	unsigned int first, n;
	struct shadow sh[KJIT_EXT_REGION];
};

static struct exception_table_entry ext_buf[2][KJIT_EXT_SLOTS];
static struct region reg[2];        /* reg[0].hi <= reg[1].lo */
static struct shadow own[KJIT_EXT_OWN_MAX];
static unsigned int table_len;      /* num_exentries while active */
static unsigned int pub;            /* index of the published buffer */
static unsigned long gp_cookie[2];  /* RCU state when a buffer was retired */
static bool cookie_valid[2];
static unsigned long sentinel_fixup;
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

static struct region *region_of(unsigned long addr)
{
	unsigned int r;

	for (r = 0; r < 2; r++)
		if (addr >= reg[r].lo && addr < reg[r].hi)
			return &reg[r];
	return NULL;
}

/* Where each region starts in the table: after the own entries below it.
 * False when an own entry lies inside a region (never: the cache is not
 * the module's text). */
static bool place_regions(void)
{
	unsigned int r, j = 0;

	for (r = 0; r < 2; r++) {
		while (j < orig_num && own[j].insn < reg[r].lo)
			j++;
		if (j < orig_num && own[j].insn < reg[r].hi)
			return false;
		reg[r].first = j + r * KJIT_EXT_REGION;
	}
	return true;
}

static void build(unsigned int b)
{
	struct exception_table_entry *t = ext_buf[b];
	unsigned int r, i, j = 0, slot = 0;

	for (r = 0; r < 2; r++) {
		for (; slot < reg[r].first; slot++, j++)
			encode(&t[slot], own[j].insn, own[j].fixup, own[j].data);
		for (i = 0; i < KJIT_EXT_REGION; i++, slot++) {
			if (i < reg[r].n)
				encode(&t[slot], reg[r].sh[i].insn, reg[r].sh[i].fixup, reg[r].sh[i].data);
			else
				encode(&t[slot], reg[r].hi - 1, sentinel_fixup, 0);
		}
	}
	for (; j < orig_num; slot++, j++)
		encode(&t[slot], own[j].insn, own[j].fixup, own[j].data);
}

static bool other_free(void)
{
	unsigned int o = pub ^ 1;

	return !cookie_valid[o] || poll_state_synchronize_rcu(gp_cookie[o]);
}

static void drop_stale(struct region *g)
{
	unsigned int i, j;

	for (i = j = 0; i < g->n; i++)
		if (!g->sh[i].stale)
			g->sh[j++] = g->sh[i];
	g->n = j;
}

/* Drops stale entries from the shadows and publishes the other buffer; the
 * one it replaces is reusable after a full grace period from now. */
static void rebuild_publish(void)
{
	unsigned int o = pub ^ 1;

	drop_stale(&reg[0]);
	drop_stale(&reg[1]);
	build(o);
	smp_wmb();
	WRITE_ONCE(THIS_MODULE->extable, ext_buf[o]);
	gp_cookie[pub] = get_state_synchronize_rcu();
	cookie_valid[pub] = true;
	pub = o;
}

static void set_regions(unsigned long lo0, unsigned long hi0, unsigned long lo1, unsigned long hi1)
{
	reg[0].lo = lo0;
	reg[0].hi = hi0;
	reg[1].lo = lo1;
	reg[1].hi = hi1;
	reg[0].n = reg[1].n = 0;
}

int kjit_extable_init(void)
{
	struct module *m = THIS_MODULE;
	unsigned long lo, hi;
	unsigned int i;

	p_search = kjit_ksym_fn("search_exception_tables");
	if (!p_search)
		return -ENOENT;
	sentinel_fixup = kjit_module_text_end(m);
	orig_extable = m->extable;
	orig_num = m->num_exentries;
	if (orig_num > KJIT_EXT_OWN_MAX)
		return -E2BIG;
	for (i = 0; i < orig_num; i++) {     /* already sorted by the loader */
		const struct exception_table_entry *e = &orig_extable[i];

		own[i].insn = (unsigned long)&e->insn + e->insn;
		own[i].fixup = (unsigned long)&e->fixup + e->fixup;
		own[i].data = e->data;
	}
	/* Until the first engine says where its halves are: the cache section
	 * in two (nothing is mirrored before kjit_extable_layout). */
	kjit_mem_cache_range(&lo, &hi);
	set_regions(lo, lo + (hi - lo) / 2, lo + (hi - lo) / 2, hi);
	if (!place_regions())
		return -EINVAL;
	table_len = orig_num + 2 * KJIT_EXT_REGION;
	pub = 0;
	build(0);
	build(1);
	/* Nothing of this module can fault before init returns: no lookup is
	 * concurrent with the switch. */
	smp_wmb();
	WRITE_ONCE(m->extable, ext_buf[0]);
	WRITE_ONCE(m->num_exentries, table_len);
	active = true;
	pr_info("dynamic extable: %u own entries, %u per cache half\n", orig_num, KJIT_EXT_REGION);
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
	unsigned int r, i;

	for (r = 0; r < 2; r++)
		for (i = 0; i < reg[r].n; i++)
			reg[r].sh[i].stale = true;
}

/* The new engine's halves [lo0, hi0) and [lo1, hi1)
 * (kjit_engine_epoch_range), with the engine idle and no cache entry live:
 * both buffers get the new regions, empty.  May sleep. */
int kjit_extable_layout(u64 lo0, u64 hi0, u64 lo1, u64 hi1)
{
	unsigned int o;

	if (!active)
		return 0;
	if (!(lo0 < hi0 && hi0 <= lo1 && lo1 < hi1) || !kjit_mem_is_cache(lo0) ||
	    !kjit_mem_is_cache(hi1 - 1))
		return -EINVAL;
	set_regions(lo0, hi0, lo1, hi1);
	if (!place_regions())
		return -EINVAL;
	o = pub ^ 1;
	build(o);
	smp_wmb();
	WRITE_ONCE(THIS_MODULE->extable, ext_buf[o]);
	pub = o;
	/* No reader is left in the old layout: the other buffer is free. */
	synchronize_rcu();
	build(o ^ 1);
	cookie_valid[0] = cookie_valid[1] = false;
	return 0;
}

/* The index of g's first entry at or above addr (g->n: none); its
 * entries are sorted. */
static unsigned int first_at_or_above(const struct region *g, unsigned long addr)
{
	unsigned int lo = 0, hi = g->n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (g->sh[mid].insn < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Writes entry i of region g in the published buffer in place, fixup and
 * data before the address (a reader that finds the address sees the
 * rest), and its shadow.  The caller has checked that no reader can be
 * looking for what the slot held. */
static void publish_in_place(struct region *g, unsigned int i, unsigned long copy,
			     unsigned long fixup, int data)
{
	struct exception_table_entry *x = &ext_buf[pub][g->first + i];

	x->fixup = (int)(long)(fixup - (unsigned long)&x->fixup);
	x->data = data;
	smp_wmb();
	WRITE_ONCE(x->insn, (int)(long)(copy - (unsigned long)&x->insn));
	g->sh[i].insn = copy;
	g->sh[i].fixup = fixup;
	g->sh[i].data = data;
	g->sh[i].stale = false;
	g->sh[i].pending = true;
}

/* An entry below the top of its region whose slot, and every slot above it
 * in the region, holds a stale entry (code of the half's previous use,
 * not dropped yet): it takes the slot in place, like an append.  The
 * region stays sorted (the slot's old address was above `copy`, the ones
 * above it are higher still), readers looking for a live address never
 * land on it, and nothing faults at `copy` before the engine publishes
 * the code there. */
static bool reuse_stale_slot(struct region *g, unsigned int lo, unsigned long copy,
			     unsigned long fixup, int data)
{
	struct exception_table_entry *x = &ext_buf[pub][g->first + lo];
	unsigned int i;

	for (i = lo; i < g->n; i++)
		if (!g->sh[i].stale)
			return false;
	if ((unsigned long)&x->insn + x->insn != g->sh[lo].insn)
		return false;
	publish_in_place(g, lo, copy, fixup, data);
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
	struct region *g = region_of(copy);
	int data;
	unsigned int lo, i;

	if (!active || !g || !kjit_mem_is_cache(copy) || copy == g->hi - 1 ||
	    (fixup_addr && !kjit_mem_is_cache(fixup_addr)))
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

	lo = first_at_or_above(g, copy);
	if (lo < g->n && g->sh[lo].insn == copy) {
		/* Same copy address again (epoch reused): update in place in
		 * both buffers; nothing can be executing at `copy` now. */
		g->sh[lo].fixup = fixup;
		g->sh[lo].data = data;
		g->sh[lo].stale = false;
		g->sh[lo].pending = true;
		for (i = 0; i < 2; i++) {
			struct exception_table_entry *x = &ext_buf[i][g->first + lo];

			if ((unsigned long)&x->insn + x->insn == copy) {
				x->fixup = (int)(long)(fixup - (unsigned long)&x->fixup);
				x->data = data;
			}
		}
		goto ok;
	}
	if (lo == g->n && g->n < KJIT_EXT_REGION) {
		/* Above every entry of the half: the slot held a sentinel,
		 * which no reader looks for.  The other buffer is rebuilt in
		 * full before its use. */
		publish_in_place(g, g->n, copy, fixup, data);
		g->n++;
		goto ok;
	}
	if (lo < g->n && reuse_stale_slot(g, lo, copy, fixup, data))
		goto ok;
	if (!other_free())
		goto busy;
	if (g->n >= KJIT_EXT_REGION) {
		rebuild_publish();           /* drops stale ones */
		if (g->n >= KJIT_EXT_REGION)
			goto decline;
		return kjit_os_mirror_extable(orig_addr, copy_addr, fixup_addr);
	}
	memmove(&g->sh[lo + 1], &g->sh[lo], (g->n - lo) * sizeof(g->sh[0]));
	g->sh[lo].insn = copy;
	g->sh[lo].fixup = fixup;
	g->sh[lo].data = data;
	g->sh[lo].stale = false;
	g->sh[lo].pending = true;
	g->n++;
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
	struct region *g = region_of(addr);
	unsigned int i;

	if (!active || !g)
		return;
	/* Every link the engine patches comes here: search, not scan. */
	for (i = first_at_or_above(g, addr); i < g->n; i++) {
		if (g->sh[i].insn >= addr + len)
			break;
		if (g->sh[i].pending)
			g->sh[i].pending = false;
		else
			g->sh[i].stale = true;
	}
}

/* [lo, hi) of the cache was quiesced: no CPU runs code there and nothing
 * links into it until it is rewritten, so its entries can go.  Dropping
 * them is not needed for new mirrors (they reuse stale slots in place) but
 * keeps a genuine fault at an address that now holds other code from
 * finding an old entry.  Engine lock held; the caller starts a grace
 * period once it has dropped it. */
void kjit_extable_retire(unsigned long lo, unsigned long hi)
{
	unsigned int r, i;
	bool any = false;

	if (!active)
		return;
	for (r = 0; r < 2; r++) {
		for (i = 0; i < reg[r].n; i++) {
			struct shadow *x = &reg[r].sh[i];

			if (x->insn >= lo && x->insn < hi && !x->stale) {
				x->stale = true;
				any = true;
			}
		}
	}
	if (any && other_free())
		rebuild_publish();
}

void kjit_extable_stats(u64 *mirrored, u64 *declined, u64 *entries)
{
	*mirrored = st_mirrored;
	*declined = st_declined;
	*entries = reg[0].n + reg[1].n;
}
