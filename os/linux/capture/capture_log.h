/* SPDX-License-Identifier: GPL-2.0 */
/* capture_log.c: the capture's recorder (buffers, state, the routines
 * translated code calls).  Used by capture.c only. */
#ifndef KJIT_CAPTURE_LOG_H
#define KJIT_CAPTURE_LOG_H

#include <linux/types.h>
#include "uapi/kjit/ioctl.h"

/* Routines called from translated code (see capture.c). */
void kjit_cap_entry_pick(u64 pc);
void kjit_cap_entry_a(u64 rax, u64 rcx, u64 rdx, u64 rbx, u64 rsp, u64 rbp);
void kjit_cap_entry_b(u64 rsi, u64 rdi, u64 r8, u64 r9, u64 r10, u64 r11);
void kjit_cap_entry_c(u64 r12, u64 r13, u64 r14, u64 r15, u64 flags, u64 pc);
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
void kjit_cap_resume_a(u64 rax, u64 rcx, u64 rdx, u64 rbx, u64 rsp, u64 rbp);
void kjit_cap_resume_b(u64 rsi, u64 rdi, u64 r8, u64 r9, u64 r10, u64 r11);
void kjit_cap_resume_c(u64 r12, u64 r13, u64 r14, u64 r15, u64 flags, u64 pc);

/* Control (capture.c, under its mutex). */
int kjit_caplog_prepare(u64 *targets, u32 n, u32 mode, u32 pid, u32 count, u32 ev_kb,
			u32 code_kb);
void kjit_caplog_set_state(int state);     /* KJIT_CAP_STATE_* */
void kjit_caplog_stopped(void);
void kjit_caplog_free(void);
int kjit_caplog_read_out(struct kjit_ioc_capture_read *r, void __user *uarg);
bool kjit_caplog_is_target(u64 pc);
void kjit_caplog_add_code(u64 pc, u32 len);
void kjit_caplog_add_block_code(u64 pc, u32 len);

#endif
