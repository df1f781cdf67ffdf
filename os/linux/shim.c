// SPDX-License-Identifier: GPL-2.0
/* The OS shim (include/kjit/os_shim.h) for the Linux kernel. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/spinlock.h>
#include <linux/smp.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>
#include <linux/kallsyms.h>
#include <linux/extable.h>
#include <linux/bug.h>
#include <linux/preempt.h>
#include <linux/hardirq.h>
#include <asm/sync_core.h>
#include "shim.h"
#include "entry_guard.h"
#include "symbols.h"
#include "fentry.h"
#include "extable.h"
#include "quiesce.h"
#include "text_deps.h"
#include "core_extable.h"

/* Symbols the kernel does not export, resolved once at load. */
static unsigned long stext, etext;
static unsigned long noinstr_start, noinstr_end;
static unsigned long kprobes_start, kprobes_end;
static unsigned long entry_start, entry_end;
static unsigned long irqentry_start, irqentry_end;
static unsigned long softirqentry_start, softirqentry_end;
/* ftrace's own trampolines in the kernel image, which a live fentry site
 * calls when several ftrace users share the function (the others get one
 * allocated per user, outside the text). */
static unsigned long ftrace_caller_start, ftrace_caller_end;
static unsigned long ftrace_regs_start, ftrace_regs_end;
static bool (*p_within_kprobe_blacklist)(unsigned long addr);
static const struct exception_table_entry *(*p_search_exception_tables)(unsigned long addr);
static struct bug_entry *(*p_find_bug)(unsigned long bugaddr);
static int (*p_kallsyms_lookup_size_offset)(unsigned long addr, unsigned long *size,
					    unsigned long *offset);
static struct module *(*p_module_text_address)(unsigned long addr);
/* Held by every agent that patches live text (text_poke's callers). */
static struct mutex *p_text_mutex;

/* Functions that are never translated, whatever the engine asks: the
 * scheduler funnel and the context switch.  A translated __schedule would let
 * a task switched in by it resume inside the code cache, which breaks the
 * unload argument in entry_attach.c (sleeping tasks never hold cache
 * addresses). */
static const char *const never_names[] = {
	"__schedule", "__switch_to_asm", "__switch_to", "schedule_tail",
	"preempt_schedule_irq",
};
#define KJIT_NEVER ARRAY_SIZE(never_names)
static unsigned long never_start[KJIT_NEVER], never_end[KJIT_NEVER];

/* Functions kprobes blacklists only so that its own handlers cannot
 * recurse into a probe, which is no reason for kjit: translated, an
 * invocation that calls them stays in the cache.  The ways into the
 * scheduler from a preemption point (preempt_enable with need_resched set,
 * preempt=full) take the task to the scheduler gate, so it is followed
 * through the preemption (sched_resume.c; the thunks end by jumping to
 * __thunk_restore, which pops what they saved); so does a task that blocks
 * on a contended spinlock_t on PREEMPT_RT (an rtmutex: schedule_rtlock);
 * bsearch serves system calls (sorted tables) as well as kprobes' own
 * lookups.  A name this kernel lacks is skipped. */
static const char *const sched_entry_names[] = {
	"preempt_schedule_thunk", "preempt_schedule_notrace_thunk", "__thunk_restore",
	"preempt_schedule", "preempt_schedule_notrace", "preempt_schedule_common", "bsearch",
	"schedule_rtlock",
};
#define KJIT_SCHED_ENTRIES ARRAY_SIZE(sched_entry_names)
static unsigned long sched_entry_start[KJIT_SCHED_ENTRIES], sched_entry_end[KJIT_SCHED_ENTRIES];

static const char *const gpr_names[KJIT_GPR_COUNT] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

static int need(unsigned long *v, const char *name)
{
	*v = kjit_ksym(name);
	if (!*v) {
		pr_err("symbol %s not found\n", name);
		return -ENOENT;
	}
	return 0;
}

int kjit_shim_init(void)
{
	int err = 0;
	unsigned int i;

	err |= need(&stext, "_stext");
	err |= need(&etext, "_etext");
	err |= need(&noinstr_start, "__noinstr_text_start");
	err |= need(&noinstr_end, "__noinstr_text_end");
	err |= need(&kprobes_start, "__kprobes_text_start");
	err |= need(&kprobes_end, "__kprobes_text_end");
	err |= need(&entry_start, "__entry_text_start");
	err |= need(&entry_end, "__entry_text_end");
	err |= need(&irqentry_start, "__irqentry_text_start");
	err |= need(&irqentry_end, "__irqentry_text_end");
	err |= need(&softirqentry_start, "__softirqentry_text_start");
	err |= need(&softirqentry_end, "__softirqentry_text_end");
	err |= need(&ftrace_caller_start, "ftrace_caller");
	err |= need(&ftrace_caller_end, "ftrace_caller_end");
	err |= need(&ftrace_regs_start, "ftrace_regs_caller");
	err |= need(&ftrace_regs_end, "ftrace_regs_caller_end");
	p_within_kprobe_blacklist = kjit_ksym_fn("within_kprobe_blacklist");
	p_search_exception_tables = kjit_ksym_fn("search_exception_tables");
	p_find_bug = kjit_ksym_fn("find_bug");
	p_kallsyms_lookup_size_offset = kjit_ksym_fn("kallsyms_lookup_size_offset");
	if (!p_kallsyms_lookup_size_offset)
		return -ENOENT;
	p_module_text_address = kjit_ksym_fn("__module_text_address");
	p_text_mutex = (void *)kjit_ksym("text_mutex");
	for (i = 0; i < KJIT_NEVER; i++) {
		unsigned long a = kjit_ksym(never_names[i]), size = 0, off = 0;

		if (!a || !p_kallsyms_lookup_size_offset(a, &size, &off) || off) {
			pr_err("cannot bound %s\n", never_names[i]);
			return -ENOENT;
		}
		never_start[i] = a;
		never_end[i] = a + size;
	}
	for (i = 0; i < KJIT_SCHED_ENTRIES; i++) {
		unsigned long a = kjit_ksym(sched_entry_names[i]), size = 0, off = 0;

		if (a && p_kallsyms_lookup_size_offset(a, &size, &off) && !off) {
			sched_entry_start[i] = a;
			sched_entry_end[i] = a + size;
		}
	}
	if (!p_within_kprobe_blacklist ||
	    !p_search_exception_tables || !p_find_bug || !p_module_text_address || !p_text_mutex) {
		pr_err("a kernel function needed by the shim was not found\n");
		return -ENOENT;
	}
	if (err)
		return -ENOENT;
	kjit_text_deps_init(stext, etext);
	kjit_core_extable_init(stext, etext, p_search_exception_tables);
	return 0;
}

/* Leaves in noinstr or entry text that syscalls call: run natively and
 * come back into the cache.  None of them sleeps, unwinds or looks at its
 * return address; a fault in them is fixed up by address (extable) inside
 * the function itself.  The GS-base helpers (arch_prctl, ptrace) are made
 * of swapgs and segment loads, which run natively in any case. */
static const char *const native_leaf_names[] = {
	"memcpy", "memset", "memmove", "__memcpy", "__memset", "__memmove",
	"memcpy_orig", "memset_orig", "memcpy_erms", "memset_erms",
	"__rdgsbase_inactive", "__wrgsbase_inactive", "asm_load_gs_index",
	/* sched_clock()'s noinstr half on kernels that split it (6.5), and
	 * the TSC clock it reaches through the pv_sched_clock static call:
	 * a capture translates the leaves, and must not leave the cache at
	 * that tail call (getrusage, times). */
	"sched_clock_noinstr", "native_sched_clock",
};
/* Called natively and returning into the cache, but never translated, not
 * even for a capture: softirq processing run from an instrumented call
 * (local_bh_enable) is other work, run on the IRQ stack; it never sleeps,
 * and the call continues in the cache when it returns.  Not on PREEMPT_RT:
 * there softirqs run in the calling task and may sleep (their spinlocks
 * are rtmutexes), and a sleeping task must hold only original return
 * addresses; the call leaves the cache like any untranslated one. */
static const char *const native_call_names[] = {
#ifndef CONFIG_PREEMPT_RT
	"__do_softirq",
#endif
};
static unsigned long native_calls[ARRAY_SIZE(native_call_names) + 1];
static unsigned long native_leaves[ARRAY_SIZE(native_leaf_names)];
static unsigned long native_leaf_end[ARRAY_SIZE(native_leaf_names)];
/* Capture needs every read of the invocation, including those the leaves
 * make: while it is armed the leaves are translated like any other code
 * (they are noinstr only so that noinstr callers may use them, nothing in
 * them depends on where they run).  Read under the engine lock by the
 * builder; the capture flushes the cache after each change. */
static bool leaves_translated;

static void kjit_resolve_native_leaves(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(native_call_names); i++)
		native_calls[i] = kjit_ksym(native_call_names[i]);

	for (i = 0; i < ARRAY_SIZE(native_leaf_names); i++) {
		unsigned long size = 0, off = 0, a = kjit_ksym(native_leaf_names[i]);

		native_leaves[i] = a;
		native_leaf_end[i] = a;
		if (a && p_kallsyms_lookup_size_offset(a, &size, &off) && !off)
			native_leaf_end[i] = a + size;
	}
}

void kjit_shim_translate_leaves(bool on)
{
	WRITE_ONCE(leaves_translated, on);
}

static bool in_native_leaf(unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(native_leaves); i++)
		if (addr >= native_leaves[i] && addr < native_leaf_end[i])
			return true;
	return false;
}

/* The return thunks by name, and the one the kernel chose at boot (the
 * live value of x86_return_thunk, which a later kernel may name otherwise),
 * each once. */
void kjit_shim_return_thunks(u64 out[KJIT_RETURN_THUNKS])
{
	static const char *const names[] = { KJIT_RETURN_THUNK_NAMES };
	unsigned long chosen = kjit_chosen_return_thunk();
	unsigned int i, n = 0;

	memset(out, 0, KJIT_RETURN_THUNKS * sizeof(*out));
	for (i = 0; i < ARRAY_SIZE(names) && n < KJIT_RETURN_THUNKS; i++) {
		unsigned long a = kjit_ksym(names[i]);

		if (a)
			out[n++] = a;
	}
	for (i = 0; i < n && out[i] != chosen; i++)
		;
	if (chosen && i == n && n < KJIT_RETURN_THUNKS)
		out[n++] = chosen;
}

unsigned long kjit_chosen_return_thunk(void)
{
	unsigned long *var = (unsigned long *)kjit_ksym("x86_return_thunk");
	unsigned long v = 0;

	if (var && get_kernel_nofault(v, var))
		v = 0;
	return v ? v : kjit_ksym("__x86_return_thunk");
}

void kjit_shim_fill_facts(struct kjit_os_kernel_facts *f)
{
	char name[64];
	int i;

	memset(f, 0, sizeof(*f));
	f->return_thunk = kjit_ksym("__x86_return_thunk");
	for (i = 0; i < KJIT_GPR_COUNT; i++) {
		snprintf(name, sizeof(name), "__x86_indirect_thunk_%s", gpr_names[i]);
		f->retpoline_thunk[i] = kjit_ksym(name);
		snprintf(name, sizeof(name), "__x86_indirect_its_thunk_%s", gpr_names[i]);
		f->its_thunk[i] = kjit_ksym(name);
		snprintf(name, sizeof(name), "__x86_indirect_jump_thunk_%s", gpr_names[i]);
		f->jump_thunk[i] = kjit_ksym(name);
		snprintf(name, sizeof(name), "__x86_indirect_call_thunk_%s", gpr_names[i]);
		f->call_thunk[i] = kjit_ksym(name);
	}
	kjit_shim_return_thunks(f->return_thunks);
	f->fentry = kjit_ksym("__fentry__");
	kjit_resolve_native_leaves();
	f->schedule_funnel = kjit_ksym("__schedule");
}

/* Page by page, so a read that crosses into an unmapped page is short
 * instead of failing entirely. */
static uint64_t read_pages(uint64_t addr, uint8_t *out, uint64_t len)
{
	uint64_t done = 0;

	while (done < len) {
		unsigned long a = (unsigned long)(addr + done);
		uint64_t chunk = min_t(uint64_t, len - done, PAGE_SIZE - offset_in_page(a));

		if (copy_from_kernel_nofault(out + done, (const void *)a, chunk))
			break;
		done += chunk;
	}
	return done;
}

uint64_t kjit_os_read_code(uint64_t addr, uint8_t *out, uint64_t len)
{
	unsigned long flags;
	uint64_t done = 0;

	/* Reads outside a translation (the engine reads only under its lock)
	 * build nothing that a text change must retire. */
	if (!kjit_os_lock_held_here())
		return read_pages(addr, out, len);
	/* Bytes a poke in flight is rewriting: none; what is read, the
	 * translation depends on (textwatch.c retires it when it changes).
	 * Check, read and note under one hold of text_deps.c's lock. */
	flags = kjit_text_deps_lock();
	if (kjit_text_deps_may_read((unsigned long)addr, (unsigned long)len, mutex_is_locked(p_text_mutex))) {
		done = read_pages(addr, out, len);
		if (done)
			kjit_text_deps_note((unsigned long)addr, (unsigned long)done);
	}
	kjit_text_deps_unlock(flags);
	return done;
}


static bool kjit_in_range(unsigned long a, unsigned long s, unsigned long e)
{
	return a >= s && a < e;
}

/* Text of a module that is live: not one being loaded (its text is still
 * patched without text_poke) or unloaded (about to be freed). */
static bool live_module_text(unsigned long addr)
{
	struct module *mod;
	bool live;

	preempt_disable();
	mod = p_module_text_address(addr);
	live = mod && READ_ONCE(mod->state) == MODULE_STATE_LIVE;
	preempt_enable();
	return live;
}

int kjit_shim_module_state(unsigned long addr)
{
	struct module *mod;
	int state;

	preempt_disable();
	mod = p_module_text_address(addr);
	state = mod ? (int)READ_ONCE(mod->state) : -1;
	preempt_enable();
	return state;
}

/* ftrace's trampolines count as another tool's code wherever they are: a
 * live fentry site runs natively, the rest of its function with it, so that
 * every hook at a function's entry (a function-graph or kretprobe return
 * trampoline written into the return slot, a livepatch's redirect) runs
 * where it expects, and no copy that runs on after an entry ran one (which
 * lets a copy's return trust its slot: block_builder.cc). */
int kjit_os_is_text(uint64_t addr64)
{
	unsigned long addr = (unsigned long)addr64;

	if (kjit_in_range(addr, ftrace_caller_start, ftrace_caller_end) ||
	    kjit_in_range(addr, ftrace_regs_start, ftrace_regs_end))
		return 0;
	return kjit_in_range(addr, stext, etext) || within_module(addr, THIS_MODULE) ||
	       live_module_text(addr);
}


/* The answer for the last few core-kernel functions.  may_translate is
 * asked for every instruction the builder copies and for every exit
 * target: its range checks, and within_kprobe_blacklist, which walks the
 * whole blacklist and looks the symbol's name up (about 80,000 guest
 * instructions per block built were measured, exec's first run, -icount),
 * were 16% of a cold system call's instructions (bench/profile, PROFILE_COLD)
 * even with the blacklist's answer remembered.  Every range asked about is
 * made of whole functions (sections bounded by symbols, named functions),
 * and core-kernel text and its blacklist entries never change, so a
 * function's answer is remembered with its extent, and with the one input
 * that does change (leaves_translated, which the capture flips).  Used only
 * under the engine lock (the builder's callers), which serialises the memo;
 * modules are not memoised (their blacklist entries come and go). */
struct kjit_fn_memo {
	unsigned long start, end;
	bool translatable, leaves;
};
static struct kjit_fn_memo fn_memo[16];
static unsigned int fn_memo_next, fn_memo_last;

static const struct kjit_fn_memo *fn_memo_find(unsigned long addr, bool leaves)
{
	const struct kjit_fn_memo *m = &fn_memo[fn_memo_last];
	unsigned int i;

	if (addr >= m->start && addr < m->end && m->leaves == leaves)
		return m;
	for (i = 0; i < ARRAY_SIZE(fn_memo); i++) {
		m = &fn_memo[i];
		if (addr >= m->start && addr < m->end && m->leaves == leaves) {
			fn_memo_last = i;
			return m;
		}
	}
	return NULL;
}

static void fn_memo_note(unsigned long addr, bool leaves, bool translatable)
{
	unsigned long size = 0, off = 0;
	struct kjit_fn_memo *m;

	if (!p_kallsyms_lookup_size_offset(addr, &size, &off) || !size)
		return;
	fn_memo_last = fn_memo_next++ % ARRAY_SIZE(fn_memo);
	m = &fn_memo[fn_memo_last];
	m->start = addr - off;
	m->end = addr - off + size;
	m->leaves = leaves;
	m->translatable = translatable;
}

static int may_translate(unsigned long addr, bool leaves)
{
	unsigned int i;

	for (i = 0; i < KJIT_NEVER; i++)
		if (kjit_in_range(addr, never_start[i], never_end[i]))
			return 0;
	for (i = 0; i < KJIT_SCHED_ENTRIES; i++)
		if (kjit_in_range(addr, sched_entry_start[i], sched_entry_end[i]))
			return 1;
	if (leaves && in_native_leaf(addr))
		return 1;
	if (kjit_in_range(addr, noinstr_start, noinstr_end) ||
	    kjit_in_range(addr, kprobes_start, kprobes_end) ||
	    kjit_in_range(addr, entry_start, entry_end) ||
	    kjit_in_range(addr, irqentry_start, irqentry_end) ||
	    kjit_in_range(addr, softirqentry_start, softirqentry_end))
		return 0;
	if (within_module(addr, THIS_MODULE))     /* never kjit itself */
		return 0;
	if (!kjit_in_range(addr, stext, etext) && !live_module_text(addr))
		return 0;
	/* NOKPROBE_SYMBOL()s and the noinstr/entry areas as kprobes sees them.
	 * The list only changes under kprobe_mutex at module load/unload. */
	return !p_within_kprobe_blacklist(addr);
}

int kjit_os_may_translate(uint64_t addr64)
{
	unsigned long addr = (unsigned long)addr64;
	bool leaves = READ_ONCE(leaves_translated);
	const struct kjit_fn_memo *m;
	int ok;

	if (!kjit_in_range(addr, stext, etext) || !kjit_os_lock_held_here())
		return may_translate(addr, leaves);
	m = fn_memo_find(addr, leaves);
	if (m)
		return m->translatable;
	ok = may_translate(addr, leaves);
	fn_memo_note(addr, leaves, ok);
	return ok;
}

/* kjit's own functions that translated code calls (its tracepoint
 * probes): never translated (kjit is not), called natively like
 * native_call_names.  Set at init, before anything is attached. */
static unsigned long own_native_calls[2];

void kjit_shim_add_native_call(unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(own_native_calls); i++)
		if (!own_native_calls[i]) {
			own_native_calls[i] = addr;
			return;
		}
	WARN_ONCE(1, "kjit: own_native_calls is full\n");
}

bool kjit_shim_is_native_call(u64 target)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(own_native_calls); i++)
		if (own_native_calls[i] && own_native_calls[i] == (unsigned long)target)
			return true;
	for (i = 0; i < ARRAY_SIZE(native_calls); i++)
		if (native_calls[i] && native_calls[i] == (unsigned long)target)
			return true;
	return false;
}

int kjit_os_callable_natively(uint64_t target)
{
	unsigned int i;

	if (kjit_shim_is_native_call(target))
		return 1;
	if (READ_ONCE(leaves_translated))
		return 0;
	for (i = 0; i < ARRAY_SIZE(native_leaves); i++)
		if (native_leaves[i] && native_leaves[i] == (unsigned long)target)
			return 1;
	return 0;
}

/* ftrace_location() of a function's start finds the fentry record anywhere
 * in the function (after an ENDBR too): only the compiler emits one. */
int kjit_os_c_abi_return(uint64_t addr)
{
	unsigned long size = 0, off = 0;

	if (!p_kallsyms_lookup_size_offset((unsigned long)addr, &size, &off) || !size)
		return 0;
	return kjit_ftrace_location((unsigned long)addr - off) != 0;
}

/* ftrace_location() of a site is the site itself (6.1 and 6.12 alike: only
 * a function's start maps to a site further in). */
int kjit_os_fentry_site(uint64_t addr)
{
	return addr && kjit_ftrace_location((unsigned long)addr) == (unsigned long)addr;
}

enum kjit_os_site_kind kjit_os_classify_site(uint64_t addr, int is_trap)
{
	int core = kjit_os_lock_held_here() ? kjit_core_extable_site((unsigned long)addr) : -1;
	u8 op[2];

	if (core == 1 || (core < 0 && p_search_exception_tables((unsigned long)addr)))
		return KJIT_SITE_EXTABLE;
	/* BUG/WARN sites are ud2 (x86 6.1); find_bug walks the whole bug
	 * table linearly, so only ask it about a ud2. */
	if (!is_trap || copy_from_kernel_nofault(op, (const void *)(unsigned long)addr, 2) ||
	    op[0] != 0x0f || op[1] != 0x0b)
		return KJIT_SITE_PLAIN;
	if (p_find_bug((unsigned long)addr))
		return KJIT_SITE_BUG;
	return KJIT_SITE_PLAIN;
}

void kjit_os_code_written(uint64_t exec_addr, uint64_t len)
{
	/* The writes went through the RW alias of the same physical pages;
	 * serialise this CPU.  Other CPUs only reach new code through a link
	 * written after the code itself. */
	kjit_extable_code_written((unsigned long)exec_addr, (unsigned long)len);
	sync_core();
}

static DEFINE_RAW_SPINLOCK(kjit_engine_lock);
/* Only touched by the holder. */
static unsigned long kjit_engine_lock_flags;
static bool kjit_engine_lock_guarded;
/* 1 on the holder's CPU while it holds the lock */
static DEFINE_PER_CPU(u8, kjit_engine_held);

/* Taken with the guard set (entry_guard.h): the lock's own functions and
 * everything called under it may be attached. */
void kjit_os_lock(void)
{
	unsigned long flags;
	bool guarded = kjit_guard_lock(&kjit_engine_lock, &flags);

	kjit_engine_lock_flags = flags;
	kjit_engine_lock_guarded = guarded;
	raw_cpu_write(kjit_engine_held, 1);
}

int kjit_os_trylock(void)
{
	unsigned long flags;
	bool guarded;

	local_irq_save(flags);
	guarded = kjit_guard_enter();
	if (!raw_spin_trylock(&kjit_engine_lock)) {
		kjit_guard_leave(guarded);
		local_irq_restore(flags);
		return 0;
	}
	kjit_engine_lock_flags = flags;
	kjit_engine_lock_guarded = guarded;
	raw_cpu_write(kjit_engine_held, 1);
	return 1;
}

void kjit_os_unlock(void)
{
	raw_cpu_write(kjit_engine_held, 0);
	kjit_guard_unlock(&kjit_engine_lock, kjit_engine_lock_flags, kjit_engine_lock_guarded);
}

/* Interrupts are off while the lock is held, so the holder cannot migrate,
 * and no other task runs on its CPU: "held by this CPU" is exact for the
 * caller. */
bool kjit_os_lock_held_here(void)
{
	return raw_cpu_read(kjit_engine_held);
}

uint32_t kjit_os_cpu(void)
{
	return raw_smp_processor_id();
}

void kjit_os_quiesce(uint64_t exec_lo, uint64_t exec_hi)
{
	/* Sleeps (a grace period, then stack checks: quiesce.c); it cannot be
	 * honoured in atomic context, where the engine never calls it. */
	if (preemptible()) {
		kjit_quiesce_range((unsigned long)exec_lo, (unsigned long)exec_hi);
		/* Nothing runs there now: its exception-table mirrors can go. */
		kjit_os_lock();
		kjit_extable_retire((unsigned long)exec_lo, (unsigned long)exec_hi);
		kjit_os_unlock();
		/* The buffer retire replaced is reusable after a grace period;
		 * start one here, never under the engine lock (extable.c). */
		start_poll_synchronize_rcu();
		return;
	}
	pr_warn_ratelimited("quiesce requested in atomic context; not waiting\n");
}

void kjit_os_log(const char *msg)
{
	pr_info("%s\n", msg);
}

void kjit_os_symbolize(uint64_t addr, char *out, uint64_t out_len)
{
	char buf[KSYM_SYMBOL_LEN];

	if (!out || !out_len)
		return;
	sprint_symbol(buf, (unsigned long)addr);
	strscpy(out, buf, out_len);
}

uint64_t kjit_os_host_call_gate(uint64_t fn)
{
	return 0;
}

uint64_t kjit_os_host_context_gate(uint64_t fn)
{
	return 0;
}
