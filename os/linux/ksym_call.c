// SPDX-License-Identifier: GPL-2.0
/* Calling kernel functions kjit finds by name.
 *
 * With IBT (CONFIG_X86_KERNEL_IBT on a CPU that enforces it) an indirect
 * call must land on an ENDBR, and at boot the kernel overwrites the ENDBR of
 * every function it never calls indirectly (objtool's .ibt_endbr_seal).
 * The unexported functions kjit calls (kallsyms_lookup_name, ftrace_location,
 * search_exception_tables, find_bug, ...) are such functions: a plain
 * function pointer to them faults (#CP) on such a CPU.  So kjit calls each
 * through a stub of its own text, `endbr64; jmp rel32 function`: the
 * indirect call lands on the stub's ENDBR, and a direct jump needs none.
 * The stub costs one jump where IBT is off, and the same code runs on every
 * kernel.
 *
 * The stubs live in .kjit_stubs (cache_area.S: module text, RO+X after
 * load), written through a vmap alias the way the code cache is
 * (cache_mem.c).  One stub per address, never freed before unload. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <asm/sync_core.h>
#include "ksym_call.h"
#include "cache_area.h"

#define STUB_SIZE 16
#define STUBS (KJIT_CALL_STUB_BYTES / STUB_SIZE)

/* cache_area.S */
extern u8 kjit_call_stub_page[];

static unsigned long stub_base;     /* kjit_call_stub_page */
static u8 *stub_alias;
static unsigned long stub_addr[STUBS];
static unsigned int nstubs;
static DEFINE_SPINLOCK(stub_lock);

int kjit_ksym_call_init(void)
{
	struct page *page = vmalloc_to_page(kjit_call_stub_page);

	if (!page || ((unsigned long)kjit_call_stub_page & ~PAGE_MASK))
		return -EFAULT;
	stub_base = (unsigned long)kjit_call_stub_page;
	stub_alias = vmap(&page, 1, VM_MAP, PAGE_KERNEL);
	return stub_alias ? 0 : -ENOMEM;
}

void kjit_ksym_call_exit(void)
{
	if (stub_alias)
		vunmap(stub_alias);
	stub_alias = NULL;
	nstubs = 0;
}

void *kjit_ksym_callable(unsigned long addr)
{
	static const u8 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned long flags, next;
	void *stub = NULL;
	unsigned int i;
	s64 rel;
	s32 rel32;
	u8 *w;

	if (!addr || !stub_alias)
		return NULL;
	spin_lock_irqsave(&stub_lock, flags);
	for (i = 0; i < nstubs; i++)
		if (stub_addr[i] == addr) {
			stub = (void *)(stub_base + i * STUB_SIZE);
			goto out;
		}
	if (nstubs == STUBS) {
		pr_err("out of call stubs for %pS\n", (void *)addr);
		goto out;
	}
	next = stub_base + nstubs * STUB_SIZE + sizeof(endbr64) + 5;
	rel = (s64)addr - (s64)next;
	if (rel != (s32)rel) {
		pr_err("%pS is out of a jump's reach of kjit's text\n", (void *)addr);
		goto out;
	}
	w = stub_alias + nstubs * STUB_SIZE;
	memset(w, 0xcc, STUB_SIZE);              /* int3 after the jump */
	memcpy(w, endbr64, sizeof(endbr64));
	w[4] = 0xe9;                             /* jmp rel32 */
	rel32 = rel;
	memcpy(w + 5, &rel32, sizeof(rel32));
	stub_addr[nstubs] = addr;
	stub = (void *)(stub_base + nstubs * STUB_SIZE);
	nstubs++;
	/* new bytes, never executed before: serialise this CPU anyway */
	sync_core();
out:
	spin_unlock_irqrestore(&stub_lock, flags);
	return stub;
}
