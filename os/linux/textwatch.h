/* SPDX-License-Identifier: GPL-2.0 */
/* textwatch.c: the code cache follows the kernel's text: every text_poke()
 * into text a translation was built from retires it at once; a module's
 * unload flushes.  Above the engine host. */
#ifndef KJIT_TEXTWATCH_H
#define KJIT_TEXTWATCH_H

#include <linux/types.h>

int kjit_textwatch_init(void);
void kjit_textwatch_exit(void);
/* Text pokes seen, of them those within an fentry site (which retire
 * nothing), and the retirements the others forced. */
struct kjit_ioc_stats;
/* text_events, text_site_events, text_flushes, module_flushes and the last
 * text flush's cause. */
void kjit_textwatch_stats(struct kjit_ioc_stats *s);

#endif
