// SPDX-License-Identifier: GPL-2.0
/* kallsyms_lookup_name is not exported in 6.1: a kprobe registered on it
 * resolves its address (kp.addr), then the kprobe is removed again. */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include "kjit_linux.h"

static unsigned long (*kjit_kln)(const char *name);

int kjit_kallsyms_init(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int ret = register_kprobe(&kp);

	if (ret < 0) {
		pr_err("kjit: kprobe on kallsyms_lookup_name failed: %d\n", ret);
		return ret;
	}
	kjit_kln = (unsigned long (*)(const char *))kp.addr;
	unregister_kprobe(&kp);
	return kjit_kln ? 0 : -ENOENT;
}

unsigned long kjit_ksym(const char *name)
{
	return kjit_kln ? kjit_kln(name) : 0;
}
