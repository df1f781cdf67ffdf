/* SPDX-License-Identifier: GPL-2.0 */
/* textwatch.c: the code cache follows the kernel's text: every text_poke()
 * into text a translation was built from retires it at once; a module's
 * unload flushes.  Above the engine host. */
#ifndef KJIT_TEXTWATCH_H
#define KJIT_TEXTWATCH_H

#include <linux/types.h>

int kjit_textwatch_init(void);
void kjit_textwatch_exit(void);
void kjit_textwatch_stats(u64 *events, u64 *flushes);

#endif
