// SPDX-License-Identifier: GPL-2.0
/* The records of the attached functions (attachments.h). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/hashtable.h>
#include <linux/sched.h>
#include "attachments.h"
#include "uapi/kjit/ioctl.h"

static struct kjit_attachment **att;
static int natt, cap;
/* 16,384 buckets: a few records each with every function attached. */
static DEFINE_HASHTABLE(by_addr, 14);

struct kjit_attachment *kjit_att_find(unsigned long addr)
{
	struct kjit_attachment *a;

	hash_for_each_possible(by_addr, a, node, addr)
		if (a->addr == addr)
			return a;
	return NULL;
}

int kjit_att_reserve(unsigned int more)
{
	struct kjit_attachment **n;
	int c;

	if (natt + more <= cap)
		return 0;
	c = max_t(int, natt + more, 2 * cap);
	c = max(c, 64);
	n = kvmalloc_array(c, sizeof(*n), GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	if (natt)
		memcpy(n, att, natt * sizeof(*n));
	kvfree(att);
	att = n;
	cap = c;
	return 0;
}

struct kjit_attachment *kjit_att_new(const char *name, unsigned long addr)
{
	size_t len = strnlen(name, KJIT_NAME_MAX - 1);
	struct kjit_attachment *a = kmalloc(sizeof(*a) + len + 1, GFP_KERNEL);

	if (!a)
		return NULL;
	a->addr = addr;
	a->direct = false;
	memcpy(a->name, name, len);
	a->name[len] = 0;
	hash_add(by_addr, &a->node, addr);
	return a;
}

void kjit_att_free(struct kjit_attachment *a)
{
	hash_del(&a->node);
	kfree(a);
}

void kjit_att_append(struct kjit_attachment *a)
{
	att[natt] = a;
	WRITE_ONCE(natt, natt + 1);
}

void kjit_att_remove(int i)
{
	kjit_att_free(att[i]);
	att[i] = att[natt - 1];
	WRITE_ONCE(natt, natt - 1);
}

void kjit_att_clear(void)
{
	int i, n = natt;

	WRITE_ONCE(natt, 0);
	for (i = 0; i < n; i++) {
		kjit_att_free(att[i]);
		if (!(i & 1023))
			cond_resched();
	}
}

struct kjit_attachment *kjit_att_at(int i)
{
	return att[i];
}

int kjit_att_count(void)
{
	return READ_ONCE(natt);
}

void kjit_att_exit(void)
{
	kjit_att_clear();
	kvfree(att);
	att = NULL;
	cap = 0;
}
