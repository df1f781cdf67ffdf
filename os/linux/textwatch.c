// SPDX-License-Identifier: GPL-2.0
/* The code cache follows the kernel's text.
 *
 * Every agent that changes live kernel or module text on x86 does it through
 * text_poke(), under text_mutex: ftrace enabling, disabling and retargeting
 * fentry sites (function tracers, function_graph, kprobes on ftrace,
 * livepatch, BPF trampolines through ftrace's direct calls), kprobes arming
 * and disarming their int3, optimized kprobes writing and removing their
 * jump, BPF trampolines and dispatchers (bpf_arch_text_poke), jump labels,
 * static calls, SMP alternatives.  text_poke_bp_batch writes each site with
 * three text_poke() calls (int3 first).  The rest of x86's text writers,
 * text_poke_early(), only patch text nobody runs yet (boot, a module being
 * loaded: never translated, kjit_os_is_text) and text_poke_copy/set write
 * BPF's pack allocator (never translated either).
 *
 * text_poke() itself is inlined into its callers in alternative.c
 * (text_poke_bp_batch: ftrace, jump labels, static calls, optprobes, BPF),
 * so the hook is on the function every one of them calls,
 * __text_poke(func, addr, src, len), which also serves text_poke_kgdb,
 * text_poke_copy and text_poke_set (BPF's pack: never a hit below).
 * One kprobe there therefore sees every change before it is written.
 * A change within an fentry site (ftrace switching a function's tracing,
 * the bulk of a busy tracer's pokes) needs nothing: translations test a
 * site's live byte instead of copying it.  For any other change the
 * handler asks text_deps.c whether the engine read any byte of the range
 * (a quick filter, without the engine lock), and if so has the engine
 * retire exactly the traces built from those bytes there and then
 * (kjit_engine_retire_range: no wait, atomic context; the rest of the cache
 * stays linked and found) and invalidates the trampoline's stored
 * translations: every entry, lookup and link after the handler returns
 * translates the new text.  Only when the engine cannot tell those traces
 * apart (no room left to redirect or index them) does it retire the whole
 * epoch (kjit_engine_retire), counted in text_flushes with its cause.  A
 * burst of pokes (text_poke_bp_batch's three per site) so costs one small
 * retirement each, not a flush each.  The handler also
 * announces the range (text_deps.c): until the write has returned (seen
 * when the next write starts, writes being serialised by text_mutex, or
 * when a read finds text_mutex free) the engine reads none of those bytes (the instruction there runs natively),
 * so no block copies them old between this retirement and the write;
 * everything else goes on being translated while ftrace patches thousands
 * of sites.  A retired half is reclaimed from a work item, after the
 * usual quiescence; retired traces stay in place until their half is.
 *
 * Freed targets need nothing here: the cache never holds a branch to memory
 * that is not kernel or live module text (another tool's trampoline or
 * probe buffer), so nothing in it can jump to what another agent frees.
 * Module text goes away only after the module notifier below detached the
 * module's functions and flushed (and quiesced) the cache synchronously. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/stacktrace.h>
#include "uapi/kjit/ioctl.h"
#include "textwatch.h"
#include "engine_host.h"
#include "entry_attach.h"
#include "entry_guard.h"
#include "reclaim_work.h"
#include "shim.h"
#include "text_deps.h"
#include "fentry.h"
#include "compat.h"
#include "kjit/os_shim.h"

static atomic64_t text_flushes, text_events, text_site_events, module_flushes, text_retires;
static bool watching;

/* What forced the last retirement for a text change (kjit_ioc_stats'
 * text_flush_*): written by the poke handler, which text_mutex serialises;
 * read racily by stats. */
#define FLUSH_BY 4
static unsigned long flush_addr, flush_by[FLUSH_BY];

/* __text_poke's callers, innermost first: the kernel's stack trace from
 * here, past the frame of the probed site (the return address of its
 * fentry call, a few bytes into __text_poke; the return address on the
 * stack at the probe may already be kretprobe's trampoline, the unwinder
 * shows the real one).  Only when the cache is retired, which is rare. */
static void note_flush_cause(unsigned long addr, unsigned long probed)
{
	unsigned long trace[32];
	unsigned int n = stack_trace_save(trace, ARRAY_SIZE(trace), 0), i, k;

	for (i = 0; i < n && !(trace[i] > probed && trace[i] <= probed + 16); i++)
		;
	WRITE_ONCE(flush_addr, addr);
	for (k = 0; k < FLUSH_BY; k++)
		WRITE_ONCE(flush_by[k], i + 1 + k < n ? trace[i + 1 + k] : 0);
}

/* Whether [addr, addr + len) lies within one fentry site. */
static bool within_fentry_site(unsigned long addr, unsigned long len)
{
	unsigned long site = len ? kjit_ftrace_location(addr) : 0;

	return site && addr >= site && addr + len <= site + MCOUNT_INSN_SIZE;
}

static int kjit_text_poke_pre(struct kprobe *p, struct pt_regs *regs)
{
	/* static void *__text_poke(text_poke_f func, void *addr, const void *src, size_t len) */
	unsigned long addr = regs->si, len = regs->cx;
	unsigned long flags;
	bool hit, guarded;
	int retired;

	atomic64_inc(&text_events);
	if (!READ_ONCE(watching))
		return 0;
	/* Writes are serialised by text_mutex: when one starts, the one
	 * announced before it has returned, and its bytes may be read again. */
	if (kjit_text_deps_announced()) {
		flags = kjit_text_deps_lock();
		kjit_text_deps_poked();
		kjit_text_deps_unlock(flags);
	}
	/* ftrace switching a function's tracing on or off writes its fentry
	 * site, which no translation copies (kjit_os_fentry_site: each tests
	 * the live byte): nothing to retire, nothing to keep the engine off. */
	if (within_fentry_site(addr, len)) {
		atomic64_inc(&text_site_events);
		return 0;
	}
	/* A way into the engine (entry_guard.h); kprobe handlers run with
	 * preemption off. */
	guarded = kjit_guard_enter();
	flags = kjit_text_deps_lock();
	kjit_text_deps_poking(addr, len);
	hit = kjit_text_deps_hit(addr, len);
	kjit_text_deps_unlock(flags);
	/* Only the traces built from these bytes; everything, when the engine
	 * cannot tell which those are. */
	retired = hit ? kjit_host_retire_range(addr, len) : 0;
	if (retired > 0)
		atomic64_inc(&text_retires);
	if (retired < 0) {
		flags = kjit_text_deps_lock();
		kjit_text_deps_forget();   /* the retirement below covers it all */
		kjit_text_deps_unlock(flags);
		if (kjit_host_retire()) {
			atomic64_inc(&text_flushes);
			note_flush_cause(addr, (unsigned long)p->addr);
			kjit_reclaim_kick();
		}
	}
	kjit_guard_leave(guarded);
	return 0;
}

static struct kprobe kp_text_poke = {
	.symbol_name = "__text_poke",
	.pre_handler = kjit_text_poke_pre,
};

static int kjit_module_event(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;

	if (!READ_ONCE(watching) || mod == THIS_MODULE)
		return NOTIFY_DONE;
	/* GOING: its text is freed after this; its attached functions and
	 * then translations of it go first (the flush waits for every task in
	 * them).  LIVE: it became translatable.  Nothing was translated from
	 * it before, but a build may have found a call into it foreign then
	 * (run natively): such a trace depends on the callee's address
	 * (core/source_deps.h), and is retired to be built again. */
	if (action == MODULE_STATE_GOING) {
		int n = kjit_detach_module(mod);

		if (n)
			pr_info("%s is going: detached %d of its functions\n", mod->name, n);
	}
	if (action == MODULE_STATE_LIVE) {
		unsigned long base, size;

		kjit_module_text(mod, &base, &size);
		if (kjit_host_retire_range(base, size) >= 0)
			return NOTIFY_DONE;
	}
	if (action == MODULE_STATE_GOING || action == MODULE_STATE_LIVE) {
		atomic64_inc(&text_flushes);
		atomic64_inc(&module_flushes);
		kjit_host_flush(true);
	}
	return NOTIFY_DONE;
}
static struct notifier_block kjit_module_nb = { .notifier_call = kjit_module_event };

int kjit_textwatch_init(void)
{
	int ret;

	/* Without it a text change could leave a stale translation: no load. */
	ret = register_kprobe(&kp_text_poke);
	if (ret) {
		pr_err("kprobe on __text_poke: %d\n", ret);
		return ret;
	}
	ret = register_module_notifier(&kjit_module_nb);
	if (ret) {
		unregister_kprobe(&kp_text_poke);
		return ret;
	}
	WRITE_ONCE(watching, true);
	return 0;
}

void kjit_textwatch_exit(void)
{
	WRITE_ONCE(watching, false);
	unregister_module_notifier(&kjit_module_nb);
	unregister_kprobe(&kp_text_poke);
}

void kjit_textwatch_stats(struct kjit_ioc_stats *s)
{
	unsigned int k;

	s->text_events = atomic64_read(&text_events);
	s->text_site_events = atomic64_read(&text_site_events);
	s->text_flushes = atomic64_read(&text_flushes);
	s->module_flushes = atomic64_read(&module_flushes);
	s->text_retires = atomic64_read(&text_retires);
	s->text_flush_addr = READ_ONCE(flush_addr);
	for (k = 0; k < FLUSH_BY; k++)
		s->text_flush_by[k] = READ_ONCE(flush_by[k]);
}
