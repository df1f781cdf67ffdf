/* SPDX-License-Identifier: GPL-2.0 */
/* fentry.c: where a function's fentry call sits. */
#ifndef KJIT_FENTRY_H
#define KJIT_FENTRY_H
#include <linux/types.h>

int kjit_fentry_init(void);
/* The fentry site of the function that starts at `func`: func itself, or
 * func + 4 after an ENDBR (IBT kernels); 0 when the function has no fentry
 * site at its entry (not traceable, or a site further in). */
unsigned long kjit_fentry_site(unsigned long func);
/* The function whose fentry site is `site` (the inverse, for names). */
unsigned long kjit_fentry_func(unsigned long site);
/* ftrace_location(): the fentry site anywhere in the function at addr, 0
 * if none (or if the kernel's function was not found at load). */
unsigned long kjit_ftrace_location(unsigned long addr);
/* Both forms of an ENDBR: endbr64/endbr32, and the 4-byte NOP the kernel
 * writes over the ENDBR of functions never called indirectly. */
bool kjit_is_endbr(u32 insn);
#endif
