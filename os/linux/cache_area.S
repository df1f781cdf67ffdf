/* SPDX-License-Identifier: GPL-2.0 */
/* The code cache: a NOBITS, alloc+write+exec section, so the module loader
 * places it in the module's text (RO+X after load, zero-filled).  See
 * cache_mem.c for the writable alias.  Not an objtool object: objtool cannot
 * decode an executable section without file contents (it crashes), and the
 * cache holds no code at build time.
 *
 * Its symbol, "kjit-code-cache", is deliberately not a C identifier: an oops
 * in the cache prints "RIP: 0010:kjit-code-cache+0x.../0x... [kjit]", and
 * report parsers that name a crash after the function on the RIP line
 * (syzkaller's pkg/report reads "RIP: 0010:FUNC+" with FUNC an identifier)
 * do not take the cache for a function: they read on to kjit's own
 * "kjit: RIP: 0010:original+0x..." line (crash_report.c).  C cannot spell
 * the name, so it reaches the cache through kjit_code_cache. */
#include "cache_area.h"
	.pushsection .kjit_cache, "ax", @nobits
	.balign 4096
	.globl "kjit-code-cache"
"kjit-code-cache":
	.skip KJIT_CACHE_MAX_BYTES
	.size "kjit-code-cache", KJIT_CACHE_MAX_BYTES
	.popsection

	.pushsection .rodata, "a"
	.balign 8
	.globl kjit_code_cache
kjit_code_cache:
	.quad "kjit-code-cache"
	.size kjit_code_cache, 8
	.popsection
