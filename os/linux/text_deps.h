/* SPDX-License-Identifier: GPL-2.0 */
/* text_deps.c: which kernel and module text the active translations were
 * built from, so that a text change retires them only when it touches that
 * text (textwatch.c).  Below the shim, whose code reads record into it.
 * Every call but init is made under kjit_text_deps_lock. */
#ifndef KJIT_TEXT_DEPS_H
#define KJIT_TEXT_DEPS_H

#include <linux/types.h>

void kjit_text_deps_init(unsigned long stext, unsigned long etext);
/* A raw spinlock of its own, held only for these bitmaps (and the read
 * they judge): never the engine lock, which a translation holds for long. */
unsigned long kjit_text_deps_lock(void);
void kjit_text_deps_unlock(unsigned long flags);
/* The engine read [addr, addr + len) to translate. */
void kjit_text_deps_note(unsigned long addr, unsigned long len);
/* Whether anything read since the last forget lies in [addr, addr + len)
 * (or may: module text is remembered by page, and all of it once the page
 * set is full). */
bool kjit_text_deps_hit(unsigned long addr, unsigned long len);
/* The translations that read it were retired: start again from nothing. */
void kjit_text_deps_forget(void);
/* [addr, addr + len) is about to be rewritten (text_mutex held). */
void kjit_text_deps_poking(unsigned long addr, unsigned long len);
/* The write announced last has returned: nothing is being rewritten. */
void kjit_text_deps_poked(void);
/* Without the lock: whether a write is announced (kjit_text_deps_poked
 * would have something to forget). */
bool kjit_text_deps_announced(void);
/* Whether the engine may read [addr, addr + len) now: not while text_mutex
 * is held (text_locked) and a write announced and not seen to return
 * touches those bytes. */
bool kjit_text_deps_may_read(unsigned long addr, unsigned long len, bool text_locked);

#endif
