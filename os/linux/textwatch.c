// SPDX-License-Identifier: GPL-2.0
/* Policy for kernel text that changes after translation.
 *
 * The engine reads LIVE text when it translates (alternatives, static keys,
 * static calls as patched at that moment).  Text patched later makes cached
 * translations stale, so kjit flushes the code cache whenever it happens:
 *  - static keys: a kprobe on arch_jump_label_transform_apply (every batch
 *    of jump-label updates ends there) and on arch_jump_label_transform
 *    (single updates);
 *  - static calls: a kprobe on arch_static_call_transform;
 *  - modules: a module notifier flushes synchronously when a module is
 *    GOING (its text is freed afterwards; translations of it must go first)
 *    and after one is LIVE.
 * The kprobe handlers only queue a work item; the flush retires the active
 * epoch (new entries translate the new text at once) and reuses the old one
 * after an RCU-tasks grace period.  Between the patch and the flush a task
 * may still run a translation made before the patch: the same as a task
 * that was already past the patched site natively when the key flipped
 * (text_poke_bp gives no stronger ordering to native code either). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/workqueue.h>
#include "textwatch.h"
#include "engine_host.h"

static atomic64_t text_flushes, text_events;
static bool watching;

static void kjit_text_flush_fn(struct work_struct *w)
{
	atomic64_inc(&text_flushes);
	kjit_host_flush(true);
}
static DECLARE_WORK(kjit_text_work, kjit_text_flush_fn);

static int kjit_text_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic64_inc(&text_events);
	if (READ_ONCE(watching))
		schedule_work(&kjit_text_work);
	return 0;
}

static struct kprobe kps[] = {
	{ .symbol_name = "arch_jump_label_transform_apply", .pre_handler = kjit_text_pre },
	{ .symbol_name = "arch_jump_label_transform", .pre_handler = kjit_text_pre },
	{ .symbol_name = "arch_static_call_transform", .pre_handler = kjit_text_pre },
};
static bool kp_ok[ARRAY_SIZE(kps)];

static int kjit_module_event(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;

	if (!READ_ONCE(watching) || mod == THIS_MODULE)
		return NOTIFY_DONE;
	if (action == MODULE_STATE_GOING || action == MODULE_STATE_LIVE) {
		atomic64_inc(&text_flushes);
		kjit_host_flush(true);
	}
	return NOTIFY_DONE;
}
static struct notifier_block kjit_module_nb = { .notifier_call = kjit_module_event };

int kjit_textwatch_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(kps); i++) {
		ret = register_kprobe(&kps[i]);
		kp_ok[i] = !ret;
		if (ret)
			pr_warn("kprobe %s: %d (no flush on that kind of patch)\n",
				kps[i].symbol_name, ret);
	}
	ret = register_module_notifier(&kjit_module_nb);
	if (ret) {
		for (i = 0; i < ARRAY_SIZE(kps); i++)
			if (kp_ok[i])
				unregister_kprobe(&kps[i]);
		return ret;
	}
	WRITE_ONCE(watching, true);
	return 0;
}

void kjit_textwatch_exit(void)
{
	unsigned int i;

	WRITE_ONCE(watching, false);
	unregister_module_notifier(&kjit_module_nb);
	for (i = 0; i < ARRAY_SIZE(kps); i++)
		if (kp_ok[i])
			unregister_kprobe(&kps[i]);
	cancel_work_sync(&kjit_text_work);
}

void kjit_textwatch_stats(u64 *events, u64 *flushes)
{
	*events = atomic64_read(&text_events);
	*flushes = atomic64_read(&text_flushes);
}
