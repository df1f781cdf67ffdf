// SPDX-License-Identifier: GPL-2.0
/* kallsyms_on_each_symbol's callback without the module argument. */
#include <linux/kallsyms.h>
_Static_assert(__builtin_types_compatible_p(typeof(&kallsyms_on_each_symbol),
	int (*)(int (*)(void *, const char *, unsigned long), void *)), "");
