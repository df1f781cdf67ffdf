/* textwatch.c: flush the cache when kernel text changes after translation
 * (static keys, static calls, modules).  Above the engine host. */
#ifndef KJIT_TEXTWATCH_H
#define KJIT_TEXTWATCH_H

#include <linux/types.h>

int kjit_textwatch_init(void);
void kjit_textwatch_exit(void);
void kjit_textwatch_stats(u64 *events, u64 *flushes);

#endif
