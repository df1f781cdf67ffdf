/* SPDX-License-Identifier: GPL-2.0 */
/* symbols.c: kernel symbol lookup and the names the control device accepts.
 * Calls only ksym_call.c. */
#ifndef KJIT_SYMBOLS_H
#define KJIT_SYMBOLS_H

#include <linux/types.h>
#include <linux/compiler_types.h>

int kjit_symbols_init(void);
/* Address of a kernel symbol (kallsyms_lookup_name), 0 if unknown. */
unsigned long kjit_ksym(const char *name);
/* A kernel function by name, callable through the pointer under IBT too
 * (ksym_call.h); NULL if unknown. */
void *kjit_ksym_fn(const char *name);
/* How far KASLR moved the kernel image from its link-time address, as
 * the kernel's kaslr_offset() (which modules cannot call: _text is not
 * exported); 0 without KASLR. */
unsigned long kjit_kaslr_offset(void);
/* kjit_ksym of n NUL-terminated names `stride` bytes apart, in one walk of
 * the kernel's symbols (an empty name: 0); may sleep. */
void kjit_ksym_many(const char *names, size_t stride, unsigned int n, unsigned long *addrs);
/* A request's names (KJIT_NAME_MAX bytes each, as the ioctls pass them),
 * copied in, and their addresses resolved in one walk: 0 for an unknown
 * name, and for an invalid one, whose copy is made empty. */
struct kjit_names {
	char *names;
	unsigned long *addrs;
};
int kjit_names_get(struct kjit_names *b, const char __user *names, u32 count);
const char *kjit_names_at(const struct kjit_names *b, u32 i);
void kjit_names_free(struct kjit_names *b);
/* 1 when `name` is a non-empty NUL-terminated [A-Za-z0-9_.] string that
 * fits in `max` bytes. */
int kjit_valid_name(const char *name, size_t max);
/* The __x64_sys_* function of system call `nr`, or -errno. */
int kjit_syscall_name(u64 nr, char *name, size_t len);

#endif
