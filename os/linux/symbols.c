// SPDX-License-Identifier: GPL-2.0
/* Kernel symbols.
 *
 * kallsyms_lookup_name is not exported in 6.1: a kprobe registered on it
 * resolves its address (kp.addr), then the kprobe is removed again.
 * System call numbers are named through the kernel's sys_call_table (its
 * entries are the __x64_sys_* functions; dispatch itself does not use the
 * table). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kallsyms.h>
#include <linux/ctype.h>
#include <linux/string.h>
#include <asm/unistd.h>
#include "symbols.h"

static unsigned long (*kjit_kln)(const char *name);
static unsigned long *kjit_sys_call_table;

int kjit_symbols_init(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int ret = register_kprobe(&kp);

	if (ret < 0) {
		pr_err("kprobe on kallsyms_lookup_name failed: %d\n", ret);
		return ret;
	}
	kjit_kln = (unsigned long (*)(const char *))kp.addr;
	unregister_kprobe(&kp);
	if (!kjit_kln)
		return -ENOENT;
	kjit_sys_call_table = (void *)kjit_ksym("sys_call_table");
	return 0;
}

unsigned long kjit_ksym(const char *name)
{
	return kjit_kln ? kjit_kln(name) : 0;
}

int kjit_valid_name(const char *name, size_t max)
{
	size_t i, n = strnlen(name, max);

	if (n == 0 || n == max)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum(name[i]) && name[i] != '_' && name[i] != '.')
			return 0;
	return 1;
}

int kjit_syscall_name(u64 nr, char *name, size_t len)
{
	char buf[KSYM_SYMBOL_LEN], *plus;

	if (!kjit_sys_call_table || nr >= NR_syscalls)
		return -EINVAL;
	sprint_symbol_no_offset(buf, READ_ONCE(kjit_sys_call_table[nr]));
	plus = strchr(buf, ' ');
	if (plus)
		*plus = 0;
	if (!strcmp(buf, "__x64_sys_ni_syscall"))
		return -ENOSYS;
	strscpy(name, buf, len);
	return 0;
}
