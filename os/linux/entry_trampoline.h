/* SPDX-License-Identifier: GPL-2.0 */
/* entry_trampoline.S: the direct-call entry trampoline (registered by
 * entry_direct.c, its slow path is entry_decide.c's kjit_direct_slow).
 * Not callable from C. */
#ifndef KJIT_ENTRY_TRAMPOLINE_H
#define KJIT_ENTRY_TRAMPOLINE_H

void kjit_direct_tramp(void);

#endif
