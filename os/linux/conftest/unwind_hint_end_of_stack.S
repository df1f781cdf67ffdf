/* SPDX-License-Identifier: GPL-2.0 */
/* The ORC hint for the bottom of a stack is UNWIND_HINT_END_OF_STACK. */
#include <linux/linkage.h>
#include <asm/unwind_hints.h>
	.text
SYM_CODE_START(kjit_conftest_hint)
	UNWIND_HINT_END_OF_STACK
	int3
SYM_CODE_END(kjit_conftest_hint)
