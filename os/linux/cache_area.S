/* SPDX-License-Identifier: GPL-2.0 */
/* The code cache: an alloc+exec section, so the module loader places it in
 * the module's text (RO+X after load).  See cache_mem.c for the writable
 * alias.
 *
 * Where objtool only reads kjit's own objects one by one, the section is
 * NOBITS (no bytes in the .ko) and this object is not objtool's: objtool
 * cannot decode an executable section without file contents (it crashes).
 * Where the kernel enforces IBT, objtool reads the whole linked module
 * instead, with no way to leave an object out: there the section carries
 * its bytes, int3 (8 MiB more in the .ko; objtool takes a few seconds and
 * about 1 GB over them).  cache_mem.c zeroes the cache at load either way.
 *
 * Its symbol, "kjit-code-cache", is deliberately not a C identifier: an oops
 * in the cache prints "RIP: 0010:kjit-code-cache+0x.../0x... [kjit]", and
 * report parsers that name a crash after the function on the RIP line
 * (syzkaller's pkg/report reads "RIP: 0010:FUNC+" with FUNC an identifier)
 * do not take the cache for a function: they read on to kjit's own
 * "kjit: RIP: 0010:original+0x..." line (crash_report.c).  C cannot spell
 * the name, so it reaches the cache through kjit_code_cache. */
#include <linux/objtool.h>
#include "cache_area.h"
#ifdef CONFIG_X86_KERNEL_IBT
#define KJIT_TEXT_SECTION(name) .pushsection name, "ax", @progbits; .balign 4096
#define KJIT_TEXT_BYTES(bytes) .fill bytes, 1, 0xcc
#else
#define KJIT_TEXT_SECTION(name) .pushsection name, "ax", @nobits; .balign 4096
#define KJIT_TEXT_BYTES(bytes) .skip bytes
#endif
	KJIT_TEXT_SECTION(.kjit_cache)
	.globl "kjit-code-cache"
"kjit-code-cache":
	ANNOTATE_NOENDBR	/* entered by RET and direct jumps; its address is data */
	KJIT_TEXT_BYTES(KJIT_CACHE_MAX_BYTES)
	.size "kjit-code-cache", KJIT_CACHE_MAX_BYTES
	.popsection

	.pushsection .rodata, "a"
	.balign 8
	.globl kjit_code_cache
kjit_code_cache:
	.quad "kjit-code-cache"
	.size kjit_code_cache, 8
	.popsection

/* Call stubs (ksym_call.c): a page of module text that kjit writes once per
 * kernel function it calls by address, laid out as the cache is and written
 * through an alias. */
	KJIT_TEXT_SECTION(.kjit_stubs)
	.globl kjit_call_stub_page
kjit_call_stub_page:
	ANNOTATE_NOENDBR	/* each stub starts with its own ENDBR (ksym_call.c) */
	KJIT_TEXT_BYTES(KJIT_CALL_STUB_BYTES)
	.size kjit_call_stub_page, KJIT_CALL_STUB_BYTES
	.popsection
