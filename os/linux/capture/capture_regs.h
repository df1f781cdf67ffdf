/* SPDX-License-Identifier: GPL-2.0 */
/* capture_regs.c: the capture's register records, BEGIN (with its copy of
 * the stack) and RESUME, each taken by one context call
 * (kjit_insert_context_call).  Inserted by capture.c. */
#ifndef KJIT_CAPTURE_REGS_H
#define KJIT_CAPTURE_REGS_H

#include "kjit/plugin.h"

/* At a target's entry block: whether this entry is recorded, and if so its
 * BEGIN and STACK records. */
void kjit_cap_entry(const struct kjit_mcontext *mc);
/* At the return address of a call the replay skips: the RESUME record,
 * when the owner's skipped call returns there. */
void kjit_cap_resumed(const struct kjit_mcontext *mc);

#endif
