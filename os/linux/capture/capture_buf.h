/* SPDX-License-Identifier: GPL-2.0 */
/* capture_buf.c: the capture's two bounded buffers, its events and the code
 * bytes of the blocks built while it is armed, and the flags that say one
 * filled up.  Used by the recorder (capture_log.c, capture_regs.c) and by
 * capture.c, which adds the code. */
#ifndef KJIT_CAPTURE_BUF_H
#define KJIT_CAPTURE_BUF_H

#include <linux/types.h>
#include "uapi/kjit/ioctl.h"

/* Fresh, zeroed buffers of ev_kb and code_kb KiB, the flags cleared. */
int kjit_capbuf_alloc(u32 ev_kb, u32 code_kb);
void kjit_capbuf_free(void);

/* Space for an event record of `len` bytes (rounded up to 8) and `type`,
 * its header filled: NULL when it does not fit beside the space kept for
 * an END, which an `end_record` (the END, the TARGET records after the last
 * one) may use. */
void *kjit_capbuf_reserve_event(u32 len, u32 type, bool end_record);
/* Publishes the record kjit_capbuf_reserve_event returned last. */
void kjit_capbuf_commit_event(void *rec);

/* A CODE record: the live bytes at [pc, pc + len), of a thunk or of a
 * block being built; for a block, a full buffer is noted in the flags
 * (KJIT_CAP_F_CODE_OVERFLOW: some blocks lack bytes). */
void kjit_capbuf_add_code(u64 pc, u32 len);
void kjit_capbuf_add_block_code(u64 pc, u32 len);

void kjit_capbuf_set_flag(u32 flag);  /* KJIT_CAP_F_* */

/* READ: the published lengths and the flags into r; then both buffers, each
 * up to that length, into the user's buffers that are large enough. */
void kjit_capbuf_snapshot(struct kjit_ioc_capture_read *r);
int kjit_capbuf_copy_out(const struct kjit_ioc_capture_read *r);

#endif
