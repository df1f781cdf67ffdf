// SPDX-License-Identifier: GPL-2.0
/* Memory for the engine: the code cache, its writable alias, the data
 * window and the arena.
 *
 * Code cache: an SHF_EXECINSTR section in this module
 * (.kjit_cache, "ax", symbol "kjit-code-cache", see cache_area.S).  The module loader lays
 * SHF_EXECINSTR sections out in the module's core text, so the cache is
 * within +/-2 GiB of kernel and module text (rel32 displacements reach) and
 * zeroed at load, and STRICT_MODULE_RWX makes it RO+X after load.  "awx" is
 * refused by the 6.1 loader ("invalid WRITE|EXEC flags").  The engine writes
 * through a second mapping of the same pages: vmap() of vmalloc_to_page() of
 * each page with PAGE_KERNEL (RW+NX).  set_memory_ro() on module text only
 * changes the module mapping and the direct-map alias, not other vmap
 * aliases, so the cache is never writable and executable at one address.
 * module_alloc, set_memory_x and text_poke are not exported, which rules out
 * the other obvious ways.  kjit_mem_selftest() checks all this at load
 * (verified in the guest: "exec view -X, write alias W-").
 *
 * Data window: a page-aligned .bss array of this module (RW+NX, same
 * +/-2 GiB reach, so translated code can address it RIP-relative).
 * Arena: vmalloc (host view only).
 *
 * The two module-image sizes are fixed at build time (KJIT_CACHE_MAX,
 * KJIT_DATA_MAX); the parameters choose how much of them the engine gets. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <asm/pgtable.h>
#include <asm/sync_core.h>
#include "cache_mem.h"

#include "cache_area.h"
#define KJIT_DATA_MAX (1UL << 20)

static unsigned int cache_kb = KJIT_DEFAULT_CACHE_KB;
module_param(cache_kb, uint, 0444);
MODULE_PARM_DESC(cache_kb, "code cache size in KiB (max 8192)");
/* The most: the area is reserved in full at load anyway (kjit_data_area). */
static unsigned int data_kb = 1024;
module_param(data_kb, uint, 0444);
MODULE_PARM_DESC(data_kb, "data window size in KiB (max 1024)");
static unsigned int arena_kb = KJIT_DEFAULT_ARENA_KB;
module_param(arena_kb, uint, 0444);
MODULE_PARM_DESC(arena_kb, "engine arena size in KiB");

/* cache_area.S: .kjit_cache (NOBITS, "ax"), KJIT_CACHE_MAX bytes, page
 * aligned; its symbol is not a C identifier, this is its address. */
extern u8 *const kjit_code_cache;

static u8 kjit_data_area[KJIT_DATA_MAX] __aligned(PAGE_SIZE);

static u8 *cache_alias;
static unsigned long cache_bytes;
static u8 *arena;

int kjit_mem_init(struct kjit_os_memory *mem)
{
	unsigned long npages, i;
	struct page **pages;
	unsigned long base = (unsigned long)kjit_code_cache;

	cache_bytes = min_t(unsigned long, (unsigned long)cache_kb << 10, KJIT_CACHE_MAX);
	cache_bytes &= PAGE_MASK;
	if (cache_bytes < 64 * 1024 || (base & ~PAGE_MASK)) {
		pr_err("bad cache size %lu or misaligned cache %px\n", cache_bytes,
		       kjit_code_cache);
		return -EINVAL;
	}
	npages = cache_bytes >> PAGE_SHIFT;
	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < npages; i++) {
		pages[i] = vmalloc_to_page((void *)(base + (i << PAGE_SHIFT)));
		if (!pages[i]) {
			kvfree(pages);
			pr_err("cache page %lu has no struct page\n", i);
			return -EFAULT;
		}
	}
	cache_alias = vmap(pages, npages, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	if (!cache_alias)
		return -ENOMEM;

	/* The section is int3s where it has bytes in the .ko (cache_area.S):
	 * the engine starts from zeroes everywhere. */
	memset(cache_alias, 0, cache_bytes);

	arena = vzalloc((unsigned long)arena_kb << 10);
	if (!arena) {
		vunmap(cache_alias);
		cache_alias = NULL;
		return -ENOMEM;
	}

	mem->arena = arena;
	mem->arena_size = (u64)arena_kb << 10;
	mem->code_write_view = cache_alias;
	mem->code_exec_base = base;
	mem->code_size = cache_bytes;
	mem->data_host_view = kjit_data_area;
	mem->data_exec_base = (u64)(unsigned long)kjit_data_area;
	mem->data_size = min_t(u64, (u64)data_kb << 10, KJIT_DATA_MAX);
	pr_info("code cache %px (%lu KiB, RW alias %px), data %px, arena %lu KiB\n",
		kjit_code_cache, cache_bytes >> 10, cache_alias, kjit_data_area,
		(unsigned long)arena_kb);
	return 0;
}

void kjit_mem_exit(void)
{
	if (cache_alias)
		vunmap(cache_alias);
	cache_alias = NULL;
	vfree(arena);
	arena = NULL;
}

/* The whole cache section, whatever part of it the engine uses. */
void kjit_mem_cache_range(unsigned long *lo, unsigned long *hi)
{
	*lo = (unsigned long)kjit_code_cache;
	*hi = *lo + KJIT_CACHE_MAX;
}

int kjit_mem_is_cache(unsigned long addr)
{
	return addr - (unsigned long)kjit_code_cache < cache_bytes;
}

static const char *prot_str(unsigned long addr, char *buf)
{
	unsigned int level;
	pte_t *pte = lookup_address(addr, &level);

	if (!pte || !pte_present(*pte))
		return "unmapped";
	snprintf(buf, 8, "%c%c", pte_write(*pte) ? 'W' : '-', pte_exec(*pte) ? 'X' : '-');
	return buf;
}

/* Writes "endbr64; mov $0x2a,%eax; ret" through the alias into the last page
 * of the cache, calls it at the exec address (an indirect call: the ENDBR
 * is what IBT requires of its target), and checks the page protections of
 * both views (exec view R-X, alias RW-, never W+X).  The bytes are zeroed
 * again afterwards. */
int kjit_mem_selftest(void)
{
	static const u8 code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3 };
	unsigned long off = cache_bytes - PAGE_SIZE;
	u8 *exec = kjit_code_cache + off;
	int (*fn)(void) = (int (*)(void))exec;
	char b1[8], b2[8];
	const char *pe, *pa;
	int ret;

	memcpy(cache_alias + off, code, sizeof(code));
	/* written through the alias: serialise this CPU before running it */
	sync_core();
	ret = fn();
	memset(cache_alias + off, 0, sizeof(code));
	pe = prot_str((unsigned long)exec, b1);
	pa = prot_str((unsigned long)cache_alias + off, b2);
	pr_info("cache selftest: exec view returned %d; exec view %s, write alias %s\n",
		ret, pe, pa);
	if (ret != 42)
		return -EIO;
	if (strcmp(pe, "-X") || strcmp(pa, "W-")) {
		pr_err("code cache views are not W^X\n");
		return -EPERM;
	}
	return 0;
}
