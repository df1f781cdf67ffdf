// SPDX-License-Identifier: GPL-2.0
/* KCOV_TRACE_CMP from machine code.  The compiler's hooks record each
 * integer comparison of the source (__sanitizer_cov_trace_[const_]cmpN);
 * here the comparisons are the machine's:
 *  - cmp A, B: (A, B), or (constant, A) when B is an immediate: the
 *    constant goes first and the record is flagged KCOV_CMP_CONST, as the
 *    const_cmp hooks do;
 *  - test R, R (the compiler's compare with zero): (0, R), constant;
 *  - test A, imm: (imm, A), constant; test A, B: (A, B).
 * Operands are GPRs (not ah..dh), immediates and memory without a segment
 * override, read when the comparison runs (values masked to its size).
 * switch statements compile to compare chains, recorded as such, or to
 * jump tables, which are not recorded (the real KCOV records their
 * __sanitizer_cov_trace_switch cases). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/uaccess.h>
#include <uapi/linux/kcov.h>
#include "kcov_cmp.h"
#include "kjit/plugin.h"

/* desc: bits 0-1 log2 of the size, 2 const, 3 first operand is an address,
 * 4 second operand is an address. */
#define CMP_DESC_CONST 4u
#define CMP_DESC_MEM_A 8u
#define CMP_DESC_MEM_B 16u

static u64 operand_value(u64 v, bool is_address, unsigned int size, bool *ok)
{
	u64 x = 0;

	if (is_address && copy_from_kernel_nofault(&x, (const void *)v, size)) {
		*ok = false;
		return 0;
	}
	if (!is_address)
		x = v;
	return size == 8 ? x : x & ((1ull << (size * 8)) - 1);
}

static void kcov_cmp_hook(u64 record, u64 desc, u64 a, u64 b, u64 pc)
{
	unsigned int size = 1u << (desc & 3);
	bool ok = true;
	u64 va = operand_value(a, desc & CMP_DESC_MEM_A, size, &ok);
	u64 vb = operand_value(b, desc & CMP_DESC_MEM_B, size, &ok);

	if (ok)
		((kjit_kcov_record_fn)record)(KCOV_CMP_SIZE(desc & 3) | (desc & CMP_DESC_CONST ? KCOV_CMP_CONST : 0),
					      va, vb, pc);
}

static struct kjit_arg operand_arg(const struct kjit_operand *op)
{
	switch (op->kind) {
	case KJIT_OPERAND_REG: return KJIT_ARG_REG(op->reg);
	case KJIT_OPERAND_IMM: return KJIT_ARG_CONST(op->imm);
	default: return KJIT_ARG_MEM_EA();
	}
}

void kjit_kcov_cmp_instrument(struct kjit_insn *in, struct kjit_arg guard, kjit_kcov_record_fn record)
{
	struct kjit_operand ops[2], first, second;
	uint32_t size;
	u64 desc;
	int kind = kjit_insn_comparison(in, ops, &size);
	bool test = kind == KJIT_COMPARE_TEST;

	if (!kind || kjit_insn_mem_segment(in) != KJIT_SEG_NONE)
		return;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return;
	desc = ilog2(size);
	first = ops[0];
	second = ops[1];
	if (test && ops[0].kind == KJIT_OPERAND_REG && ops[1].kind == KJIT_OPERAND_REG && ops[0].reg == ops[1].reg) {
		first = (struct kjit_operand){ KJIT_OPERAND_IMM, 0, 0 };
		second = ops[0];
		desc |= CMP_DESC_CONST;
	} else if (ops[1].kind == KJIT_OPERAND_IMM) {
		first = ops[1];
		second = ops[0];
		desc |= CMP_DESC_CONST;
	}
	if (first.kind == KJIT_OPERAND_MEM)
		desc |= CMP_DESC_MEM_A;
	if (second.kind == KJIT_OPERAND_MEM)
		desc |= CMP_DESC_MEM_B;
	kjit_insert_call_if(in, KJIT_IPOINT_BEFORE, guard, (void *)kcov_cmp_hook, 5, KJIT_ARG_CONST((u64)record),
			 KJIT_ARG_CONST(desc), operand_arg(&first), operand_arg(&second), KJIT_ARG_INSN_PC());
}
