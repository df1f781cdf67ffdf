/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel APIs whose shape differs between the kernels kjit supports,
 * chosen by what conftest.sh found in the headers (kjit_compat_generated.h),
 * never by a version number: distribution kernels backport.  C and
 * assembly. */
#ifndef KJIT_COMPAT_H
#define KJIT_COMPAT_H
#include "kjit_compat_generated.h"

/* preempt_count's per-CPU home, for PER_CPU_VAR() in assembly. */
#if defined(KJIT_HAVE_PCPU_HOT_PREEMPT_COUNT)
#define KJIT_PREEMPT_COUNT_VAR pcpu_hot + KJIT_PCPU_HOT_PREEMPT_COUNT
#else
#define KJIT_PREEMPT_COUNT_VAR __preempt_count
#endif

#ifdef __ASSEMBLY__
/* The hint for code entered with no frame below it (a RET from the
 * scheduler into a stub of kjit's). */
#ifdef KJIT_HAVE_UNWIND_HINT_END_OF_STACK
#define KJIT_UNWIND_HINT_NO_FRAME UNWIND_HINT_END_OF_STACK
#else
#define KJIT_UNWIND_HINT_NO_FRAME UNWIND_HINT_EMPTY
#endif

#else /* !__ASSEMBLY__ */
#include <linux/ftrace.h>
#include <linux/mm.h>
#include <linux/module.h>

/* One direct trampoline per ftrace_ops. */
static inline int kjit_register_ftrace_direct(struct ftrace_ops *ops, unsigned long addr)
{
#ifdef KJIT_HAVE_FTRACE_DIRECT_OPS
	return register_ftrace_direct(ops, addr);
#else
	return register_ftrace_direct_multi(ops, addr);
#endif
}

/* The ops' filter stays: its owner frees it (ftrace_free_filter), as the
 * _multi call never freed it. */
static inline int kjit_unregister_ftrace_direct(struct ftrace_ops *ops, unsigned long addr)
{
#ifdef KJIT_HAVE_FTRACE_DIRECT_OPS
	return unregister_ftrace_direct(ops, addr, false);
#else
	return unregister_ftrace_direct_multi(ops, addr);
#endif
}

/* A module's core text: [*base, *base + *size). */
static inline void kjit_module_text(struct module *m, unsigned long *base, unsigned long *size)
{
#ifdef KJIT_HAVE_MODULE_MEM
	*base = (unsigned long)m->mem[MOD_TEXT].base;
	*size = m->mem[MOD_TEXT].size;
#else
	*base = (unsigned long)m->core_layout.base;
	*size = m->core_layout.text_size;
#endif
}

/* The end of a module's core text image. */
static inline unsigned long kjit_module_text_end(struct module *m)
{
#ifdef KJIT_HAVE_MODULE_MEM
	return (unsigned long)m->mem[MOD_TEXT].base + m->mem[MOD_TEXT].size;
#else
	return (unsigned long)m->core_layout.base + m->core_layout.size;
#endif
}

static inline void kjit_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef KJIT_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* kallsyms_on_each_symbol's callback; kjit calls the function through a
 * pointer of this type (it is not exported), so a wrong shape would compile
 * and read garbage: the type comes from the probe that matched the headers'
 * own declaration. */
struct module;
#ifdef KJIT_HAVE_KALLSYMS_EACH_NO_MODULE
#define KJIT_KALLSYMS_CB_ARGS(data, name, mod, addr) void *data, const char *name, unsigned long addr
#define KJIT_KALLSYMS_CB_MODULE(mod) NULL
#else
#define KJIT_KALLSYMS_CB_ARGS(data, name, mod, addr) \
	void *data, const char *name, struct module *mod, unsigned long addr
#define KJIT_KALLSYMS_CB_MODULE(mod) (mod)
#endif
typedef int (*kjit_kallsyms_cb)(KJIT_KALLSYMS_CB_ARGS(data, name, mod, addr));
#endif /* __ASSEMBLY__ */
#endif
