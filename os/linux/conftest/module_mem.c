// SPDX-License-Identifier: GPL-2.0
/* A module's memory is described per type (mod->mem[MOD_TEXT]), not by
 * core_layout. */
#include <linux/module.h>
unsigned long kjit_conftest_module_text_end(struct module *m);
unsigned long kjit_conftest_module_text_end(struct module *m)
{
	return (unsigned long)m->mem[MOD_TEXT].base + m->mem[MOD_TEXT].size;
}
