/* SPDX-License-Identifier: GPL-2.0 */
/* kcov_cmp.c: which comparisons KCOV_TRACE_CMP records and how their
 * operand values reach the record (a helper of kcov.c). */
#ifndef KJIT_KCOV_CMP_H
#define KJIT_KCOV_CMP_H

#include <linux/types.h>

#include "kjit/plugin.h"

/* write_comp_data(type, arg1, arg2, pc) */
typedef void (*kjit_kcov_record_fn)(u64 type, u64 arg1, u64 arg2, u64 pc);
/* Instruments `in` when it is a comparison kcov records: the hook runs
 * only while the byte `guard` names is set (kjit_insert_call_if). */
void kjit_kcov_cmp_instrument(struct kjit_insn *in, struct kjit_arg guard, kjit_kcov_record_fn record);

#endif
