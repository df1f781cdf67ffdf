// SPDX-License-Identifier: GPL-2.0
/* Kernel symbols.
 *
 * kallsyms_lookup_name is not exported in 6.1: a kprobe registered on it
 * resolves its address (kp.addr), then the kprobe is removed again.
 * It walks every symbol until it finds the name (6.1 has no sorted name
 * index): many names are resolved in one walk of kallsyms_on_each_symbol.
 * System call numbers are named through the kernel's sys_call_table (its
 * entries are the __x64_sys_* functions; dispatch itself does not use the
 * table). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kallsyms.h>
#include <linux/ctype.h>
#include <linux/string.h>
#include <linux/stringhash.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/log2.h>
#include <linux/uaccess.h>
#include <asm/page.h>
#include <asm/unistd.h>
#include "symbols.h"
#include "ksym_call.h"
#include "compat.h"
#include "uapi/kjit/ioctl.h"

static unsigned long (*kjit_kln)(const char *name);
static int (*kjit_kallsyms_each)(kjit_kallsyms_cb fn, void *data);
static unsigned long *kjit_sys_call_table;

int kjit_symbols_init(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int ret = register_kprobe(&kp);

	if (ret < 0) {
		pr_err("kprobe on kallsyms_lookup_name failed: %d\n", ret);
		return ret;
	}
	kjit_kln = kjit_ksym_callable((unsigned long)kp.addr);
	unregister_kprobe(&kp);
	if (!kjit_kln)
		return -ENOENT;
	kjit_sys_call_table = (void *)kjit_ksym("sys_call_table");
	kjit_kallsyms_each = kjit_ksym_fn("kallsyms_on_each_symbol");
	return 0;
}

unsigned long kjit_ksym(const char *name)
{
	return kjit_kln ? kjit_kln(name) : 0;
}

void *kjit_ksym_fn(const char *name)
{
	return kjit_ksym_callable(kjit_ksym(name));
}

unsigned long kjit_kaslr_offset(void)
{
	static unsigned long offset;
	unsigned long text;

	if (!offset) {
		text = kjit_ksym("_text");
		offset = text ? text - __START_KERNEL : 0;
	}
	return offset;
}

/* kjit_ksym_many's table: the names asked for, hashed. */
struct ksym_want {
	struct hlist_node node;
	const char *name;
	unsigned long *addr;
};

struct ksym_table {
	struct hlist_head *heads;
	unsigned int bits;
};

static u32 name_hash(const char *name)
{
	return full_name_hash(NULL, name, strlen(name));
}

/* kallsyms_on_each_symbol's callback: a wanted name's first address, as
 * kallsyms_lookup_name would return it. */
static int ksym_seen(KJIT_KALLSYMS_CB_ARGS(data, name, mod, addr))
{
	struct ksym_table *t = data;
	struct ksym_want *w;

	hlist_for_each_entry(w, &t->heads[hash_32(name_hash(name), t->bits)], node)
		if (!*w->addr && !strcmp(w->name, name))
			*w->addr = addr;
	return 0;
}

void kjit_ksym_many(const char *names, size_t stride, unsigned int n, unsigned long *addrs)
{
	struct ksym_table t;
	struct ksym_want *w = NULL;
	unsigned int i;

	memset(addrs, 0, n * sizeof(*addrs));
	t.bits = max(4u, (unsigned int)ilog2(n | 1) + 1);
	t.heads = kvcalloc(1u << t.bits, sizeof(*t.heads), GFP_KERNEL);
	if (kjit_kallsyms_each && t.heads)
		w = kvmalloc_array(n, sizeof(*w), GFP_KERNEL);
	if (w) {
		for (i = 0; i < n; i++) {
			w[i].name = names + i * stride;
			w[i].addr = &addrs[i];
			hlist_add_head(&w[i].node, &t.heads[hash_32(name_hash(w[i].name), t.bits)]);
		}
		kjit_kallsyms_each(ksym_seen, &t);
	}
	/* the rest (modules' symbols), or all of them without the walk */
	for (i = 0; i < n; i++) {
		if (!addrs[i] && names[i * stride])
			addrs[i] = kjit_ksym(names + i * stride);
		if (!(i & 255))
			cond_resched();
	}
	kvfree(w);
	kvfree(t.heads);
}

void kjit_names_free(struct kjit_names *b)
{
	kvfree(b->names);
	kvfree(b->addrs);
	b->names = NULL;
	b->addrs = NULL;
}

int kjit_names_get(struct kjit_names *b, const char __user *names, u32 count)
{
	size_t len = (size_t)count * KJIT_NAME_MAX;
	u32 i;

	b->names = kvmalloc(len, GFP_KERNEL);
	b->addrs = kvmalloc_array(count, sizeof(*b->addrs), GFP_KERNEL);
	if (!b->names || !b->addrs) {
		kjit_names_free(b);
		return -ENOMEM;
	}
	if (copy_from_user(b->names, names, len)) {
		kjit_names_free(b);
		return -EFAULT;
	}
	for (i = 0; i < count; i++) {
		char *name = b->names + (size_t)i * KJIT_NAME_MAX;

		if (!kjit_valid_name(name, KJIT_NAME_MAX))
			name[0] = 0;
	}
	kjit_ksym_many(b->names, KJIT_NAME_MAX, count, b->addrs);
	return 0;
}

const char *kjit_names_at(const struct kjit_names *b, u32 i)
{
	return b->names + (size_t)i * KJIT_NAME_MAX;
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
