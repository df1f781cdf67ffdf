/* SPDX-License-Identifier: GPL-2.0 */
/* attachments.c: the records of the attached functions, in an array (for
 * listing them and detaching them all) and hashed by address (the -EEXIST
 * check, asked once per name when tens of thousands are attached in one
 * request).  The array grows on demand.  Serialised by the caller
 * (entry_attach.c's attach mutex), except kjit_att_count.  Bottom layer:
 * calls nothing else of kjit.ko. */
#ifndef KJIT_ATTACHMENTS_H
#define KJIT_ATTACHMENTS_H

#include <linux/types.h>
#include <linux/list.h>

struct kjit_attachment {
	struct hlist_node node;      /* in the address hash */
	unsigned long addr;
	bool direct;                 /* through entry_direct.c, not the IPMODIFY ops */
	char name[];
};

/* The attachment at addr: in the array, or made by kjit_att_new and not
 * yet appended; NULL. */
struct kjit_attachment *kjit_att_find(unsigned long addr);
/* Room for `more` appends; -ENOMEM. */
int kjit_att_reserve(unsigned int more);
/* A record for name at addr, hashed, not yet in the array; NULL. */
struct kjit_attachment *kjit_att_new(const char *name, unsigned long addr);
/* Frees a record that is not in the array. */
void kjit_att_free(struct kjit_attachment *a);
/* Appends a record (after kjit_att_reserve). */
void kjit_att_append(struct kjit_attachment *a);
/* Frees record i; the last one takes its place. */
void kjit_att_remove(int i);
/* Frees every record (the array stays for reuse). */
void kjit_att_clear(void);
struct kjit_attachment *kjit_att_at(int i);
/* How many are in the array; lock-free. */
int kjit_att_count(void);
/* Frees every record and the array (unload). */
void kjit_att_exit(void);

#endif
