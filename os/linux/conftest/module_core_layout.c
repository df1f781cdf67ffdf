// SPDX-License-Identifier: GPL-2.0
/* A module's core image is described by core_layout. */
#include <linux/module.h>
unsigned long kjit_conftest_module_core_end(struct module *m);
unsigned long kjit_conftest_module_core_end(struct module *m)
{
	return (unsigned long)m->core_layout.base + m->core_layout.size;
}
