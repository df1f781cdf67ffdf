// SPDX-License-Identifier: GPL-2.0
/* The earlier shape: register_ftrace_direct_multi(ops, addr). */
#include <linux/ftrace.h>
_Static_assert(__builtin_types_compatible_p(typeof(&register_ftrace_direct_multi),
					    int (*)(struct ftrace_ops *, unsigned long)), "");
