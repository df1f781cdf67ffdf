/* SPDX-License-Identifier: GPL-2.0 */
/* capture_log.c: the capture's recorder (its state, the routines translated
 * code calls for an invocation's events).  Used by capture.c, and by
 * capture_regs.c for the records that take every register. */
#ifndef KJIT_CAPTURE_LOG_H
#define KJIT_CAPTURE_LOG_H

#include <linux/types.h>
#include "uapi/kjit/ioctl.h"

/* Routines called from translated code (see capture.c). */
void kjit_cap_block(u64 pc, u64 ninsns, u64 flags);
void kjit_cap_read(u64 pc, u64 ea, u64 size, u64 seg);
void kjit_cap_load_before(u64 pc, u64 ea, u64 size, u64 seg);
void kjit_cap_load_after(void);
/* kjit_cap_string's kind: the element width (1, 2, 4, 8) | these */
#define CAP_STR_REP 0x100          /* rcx elements */
#define CAP_STR_TWO_SOURCES 0x200  /* cmps: rsi and rdi */
#define CAP_STR_RDI_ONLY 0x400     /* scas */
void kjit_cap_string(u64 pc, u64 rsi, u64 rdi, u64 rcx, u64 flags, u64 kind);
void kjit_cap_nondet(u64 pc, u64 dest, u64 rcx, u64 rdx, u64 rbx, u64 flags);
void kjit_cap_ret(u64 pc, u64 rsp);
void kjit_cap_read_after(u64 value);
void kjit_cap_bit_load_before(u64 pc, u64 ea, u64 size, u64 seg, u64 bit);
void kjit_cap_bit_read(u64 pc, u64 ea, u64 size, u64 seg, u64 bit);
void kjit_cap_sleep(u64 pc, u64 target, u64 ret);
void kjit_cap_native_call(u64 pc, u64 target, u64 ret);

/* For the register records (capture_regs.c), from the owner's routines. */
/* At a target's entry block `pc`, with the stack pointer `rsp`: whether
 * this entry is recorded.  True when current now owns the capture and
 * opens an invocation, whose BEGIN comes next. */
bool kjit_caplog_claim(u64 pc, u64 rsp);
/* Event space for the owner, or NULL after ending the capture (overflow). */
void *kjit_caplog_reserve(u32 len, u32 type);
/* A call the owner made outside the cache (kjit_cap_sleep,
 * kjit_cap_native_call): its pc, its target and its return address. */
struct kjit_caplog_skipped_call {
	u64 pc, target, ret;
};
/* True, once, when the owner goes on at `pc` after such a call (pc is its
 * return address), with the call in *call; the pending read is logged
 * first. */
bool kjit_caplog_take_resume(u64 pc, struct kjit_caplog_skipped_call *call);

/* Control (capture.c, under its mutex). */
int kjit_caplog_prepare(u64 *targets, u32 n, u32 mode, u32 pid, u32 count, u32 ev_kb,
			u32 code_kb);
void kjit_caplog_set_state(int state);     /* KJIT_CAP_STATE_* */
void kjit_caplog_stopped(void);
void kjit_caplog_free(void);
int kjit_caplog_read_out(struct kjit_ioc_capture_read *r, void __user *uarg);
bool kjit_caplog_is_target(u64 pc);

#endif
