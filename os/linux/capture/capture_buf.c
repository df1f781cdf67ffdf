// SPDX-License-Identifier: GPL-2.0
/* The capture's event and code buffers.  Each has one writer at a time:
 * events are written by the task that owns the open invocation (or by
 * capture.c under its mutex once no routine can run), code by the block
 * builder under the engine lock.  READ sees a record only once it is
 * complete: `used` is published after the bytes. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "capture_buf.h"

/* Kept free for the END(overflow) that closes the capture when an event
 * does not fit. */
#define CAP_END_RESERVE 64

struct cap_buf {
	u8 *p;
	u64 cap;
	u64 used;                /* published length */
};

static struct cap_buf ev, code;
static u32 cap_flags;            /* KJIT_CAP_F_* */

static void *cap_reserve(struct cap_buf *b, u32 len, u32 type, bool end_record)
{
	struct kjit_cap_rec *r;
	u64 room = b->cap - b->used;

	len = ALIGN(len, 8);
	if (!end_record && b == &ev && len + CAP_END_RESERVE > room)
		return NULL;
	if (len > room)
		return NULL;
	r = (struct kjit_cap_rec *)(b->p + b->used);
	r->type = type;
	r->len = len;
	return r;
}

static void cap_commit(struct cap_buf *b, void *rec)
{
	struct kjit_cap_rec *r = rec;

	smp_wmb();
	WRITE_ONCE(b->used, b->used + r->len);
}

void *kjit_capbuf_reserve_event(u32 len, u32 type, bool end_record)
{
	return cap_reserve(&ev, len, type, end_record);
}

void kjit_capbuf_commit_event(void *rec)
{
	cap_commit(&ev, rec);
}

/* False when the code buffer is full. */
static bool cap_add_code(u64 pc, u32 len)
{
	struct kjit_cap_code *c = cap_reserve(&code, sizeof(*c) + len, KJIT_CAP_CODE, true);

	if (!c)
		return false;
	c->pc = pc;
	c->len = len;
	c->pad = 0;
	if (copy_from_kernel_nofault(c + 1, (void *)(unsigned long)pc, len) == 0)
		cap_commit(&code, c);
	return true;
}

void kjit_capbuf_add_code(u64 pc, u32 len)
{
	cap_add_code(pc, len);
}

/* Under the engine lock: one writer. */
void kjit_capbuf_add_block_code(u64 pc, u32 len)
{
	if (!cap_add_code(pc, len))
		cap_flags |= KJIT_CAP_F_CODE_OVERFLOW;
}

void kjit_capbuf_set_flag(u32 flag)
{
	cap_flags |= flag;
}

void kjit_capbuf_free(void)
{
	vfree(ev.p);
	vfree(code.p);
	memset(&ev, 0, sizeof(ev));
	memset(&code, 0, sizeof(code));
}

int kjit_capbuf_alloc(u32 ev_kb, u32 code_kb)
{
	kjit_capbuf_free();
	ev.p = vzalloc((u64)ev_kb << 10);
	code.p = vzalloc((u64)code_kb << 10);
	if (!ev.p || !code.p) {
		kjit_capbuf_free();
		return -ENOMEM;
	}
	ev.cap = (u64)ev_kb << 10;
	code.cap = (u64)code_kb << 10;
	cap_flags = 0;
	return 0;
}

void kjit_capbuf_snapshot(struct kjit_ioc_capture_read *r)
{
	r->event_bytes = READ_ONCE(ev.used);
	r->code_bytes = READ_ONCE(code.used);
	smp_rmb();
	r->flags = cap_flags;
}

int kjit_capbuf_copy_out(const struct kjit_ioc_capture_read *r)
{
	u64 evn = r->event_bytes, con = r->code_bytes;

	if (r->buf_ptr && r->buf_len >= evn && evn &&
	    copy_to_user(u64_to_user_ptr(r->buf_ptr), ev.p, evn))
		return -EFAULT;
	if (r->code_ptr && r->code_len >= con && con &&
	    copy_to_user(u64_to_user_ptr(r->code_ptr), code.p, con))
		return -EFAULT;
	return 0;
}
