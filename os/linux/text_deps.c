// SPDX-License-Identifier: GPL-2.0
/* What the active translations were built from.
 *
 * Every byte the engine copies or decodes is read through kjit_os_read_code
 * (shim.c), under the engine lock, which notes it here.  The text-poke hook
 * (textwatch.c) asks whether a patched range was read: only then must it
 * retire the cache.  The answer may be a false "yes" (a neighbour in the
 * same 64-byte chunk or module page), never a false "no".
 *  - core kernel text [_stext, _etext): one bit per chunk, 64 bytes (more
 *    for a text larger than 16 MiB);
 *  - module text: a set of pages; once full, every module page counts as
 *    read until the next forget.
 * It also remembers what is being rewritten: the ranges the text-poke hook
 * saw announced and whose write has not been seen to end.  A read of such
 * bytes may see them old, after the hook retired what depended on them: it
 * is refused (the engine runs the instruction there natively).  The set is
 * forgotten when the next write starts (textwatch.c: writes are serialised
 * by text_mutex, so the one before has returned), or at the first read
 * that finds text_mutex free.  Only the
 * write itself is waited for, never the rest of its writer's hold of
 * text_mutex: the kprobe optimizer holds it across an RCU-tasks grace
 * period, and every attach pokes the attached functions' entries, so
 * waiting for the mutex would run them natively for as long.  Same
 * granularity as above.
 * All under a raw spinlock of this file's own, and static: nothing here
 * sleeps, allocates or is freed while the engine runs.  A read takes it
 * from the check to the note (shim.c, inside the engine lock: the order is
 * always engine lock, then this one), a poke from the announcement to the
 * test (textwatch.c, alone): so either the poke finds the read noted and
 * retires its translation, or the read finds the poke announced and does
 * not happen.  The poke handler never waits for the engine lock unless it
 * retires: a translation holds that lock for long, and ftrace rewriting
 * tens of thousands of sites in one loop that never reschedules (three
 * pokes each) waited on it at every poke. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/bitmap.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/spinlock.h>
#include "text_deps.h"

#define CORE_BITS (1u << 18)           /* 32 KiB: 64-byte chunks of 16 MiB */
#define MOD_PAGE_BITS 11               /* 2048 module pages */
#define MOD_PAGES (1u << MOD_PAGE_BITS)
#define MOD_PROBES 8

static unsigned long core_start, core_end;
static unsigned int chunk_shift = 6;
static unsigned long core_bits[BITS_TO_LONGS(CORE_BITS)];
static unsigned long mod_pages[MOD_PAGES];   /* page address, 0 = free */
static bool mod_all;                   /* the page set overflowed */
static bool dirty;                     /* something noted since forget */
static unsigned long poked_bits[BITS_TO_LONGS(CORE_BITS)];  /* core chunks being rewritten */
static bool poked_module;              /* module text being rewritten */
static bool poking;                    /* something in poked_* */
static DEFINE_RAW_SPINLOCK(deps_lock);

unsigned long kjit_text_deps_lock(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&deps_lock, flags);
	return flags;
}

void kjit_text_deps_unlock(unsigned long flags)
{
	raw_spin_unlock_irqrestore(&deps_lock, flags);
}

void kjit_text_deps_init(unsigned long stext, unsigned long etext)
{
	core_start = stext;
	core_end = etext;
	while (((etext - stext) >> chunk_shift) >= CORE_BITS)
		chunk_shift++;
}

static bool in_core(unsigned long a)
{
	return a >= core_start && a < core_end;
}

static void note_page(unsigned long page)
{
	unsigned int h = hash_long(page, MOD_PAGE_BITS), i;

	for (i = 0; i < MOD_PROBES; i++) {
		unsigned long *s = &mod_pages[(h + i) & (MOD_PAGES - 1)];

		if (*s == page)
			return;
		if (!*s) {
			*s = page;
			return;
		}
	}
	mod_all = true;
}

static bool has_page(unsigned long page)
{
	unsigned int h = hash_long(page, MOD_PAGE_BITS), i;

	if (mod_all)
		return true;
	for (i = 0; i < MOD_PROBES; i++) {
		unsigned long s = mod_pages[(h + i) & (MOD_PAGES - 1)];

		if (s == page)
			return true;
		if (!s)
			return false;
	}
	return false;
}

/* The chunk (core text) or page (module text) after the one holding a. */
static unsigned long next_unit(unsigned long a)
{
	return in_core(a) ? (a | ((1ul << chunk_shift) - 1)) + 1 : (a & PAGE_MASK) + PAGE_SIZE;
}

void kjit_text_deps_note(unsigned long addr, unsigned long len)
{
	unsigned long a, end = addr + len;

	if (!core_end || !len)
		return;
	dirty = true;
	for (a = addr; a < end; a = next_unit(a)) {
		if (in_core(a))
			__set_bit((a - core_start) >> chunk_shift, core_bits);
		else
			note_page(a & PAGE_MASK);
	}
}

bool kjit_text_deps_hit(unsigned long addr, unsigned long len)
{
	unsigned long a, end = addr + len;

	if (!dirty || !len)
		return false;
	for (a = addr; a < end; a = next_unit(a)) {
		if (in_core(a) ? test_bit((a - core_start) >> chunk_shift, core_bits)
			       : has_page(a & PAGE_MASK))
			return true;
	}
	return false;
}

void kjit_text_deps_forget(void)
{
	if (!dirty)
		return;
	bitmap_zero(core_bits, CORE_BITS);
	memset(mod_pages, 0, sizeof(mod_pages));
	mod_all = false;
	dirty = false;
}

void kjit_text_deps_poking(unsigned long addr, unsigned long len)
{
	unsigned long a, end = addr + len;

	if (!core_end || !len)
		return;
	WRITE_ONCE(poking, true);
	for (a = addr; a < end; a = next_unit(a)) {
		if (in_core(a))
			__set_bit((a - core_start) >> chunk_shift, poked_bits);
		else
			poked_module = true;
	}
}

bool kjit_text_deps_announced(void)
{
	return READ_ONCE(poking);
}

void kjit_text_deps_poked(void)
{
	if (!poking)
		return;
	bitmap_zero(poked_bits, CORE_BITS);
	poked_module = false;
	WRITE_ONCE(poking, false);
}

bool kjit_text_deps_may_read(unsigned long addr, unsigned long len, bool text_locked)
{
	unsigned long a, end = addr + len;

	if (!poking)
		return true;
	if (!text_locked) {
		kjit_text_deps_poked();
		return true;
	}
	for (a = addr; a < end; a = next_unit(a)) {
		if (in_core(a) ? test_bit((a - core_start) >> chunk_shift, poked_bits) : poked_module)
			return false;
	}
	return true;
}
