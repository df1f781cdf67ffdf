// SPDX-License-Identifier: GPL-2.0
/* One direct trampoline per ftrace_ops: register_ftrace_direct(ops, addr). */
#include <linux/ftrace.h>
_Static_assert(__builtin_types_compatible_p(typeof(&register_ftrace_direct),
					    int (*)(struct ftrace_ops *, unsigned long)), "");
