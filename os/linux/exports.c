// SPDX-License-Identifier: GPL-2.0
/* The plugin API (include/kjit/plugin.h) exported to plugin modules, so an
 * external module in C is written as the built-in tools are (see
 * plugins/linux/).  The functions live in the engine object of this module.
 * Limits: kjit_alloc memory lives until the next KJIT_IOC_CONFIG (which is
 * refused while a plugin module uses kjit).  on_entry is called for every
 * registered plugin (kjit_engine_notify_entry from the ftrace handler);
 * on_exit from the gates (while a plugin has on_exit, the engine routes
 * every return to a stop address through a gate). */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/module.h>
#include "kjit/plugin.h"
#include "kjit/engine.h"

EXPORT_SYMBOL_GPL(kjit_insn_pc);
EXPORT_SYMBOL_GPL(kjit_insn_length);
EXPORT_SYMBOL_GPL(kjit_insn_cf_class);
EXPORT_SYMBOL_GPL(kjit_insn_is_branch);
EXPORT_SYMBOL_GPL(kjit_insn_is_conditional);
EXPORT_SYMBOL_GPL(kjit_insn_is_call);
EXPORT_SYMBOL_GPL(kjit_insn_is_return);
EXPORT_SYMBOL_GPL(kjit_insn_has_lock_prefix);
EXPORT_SYMBOL_GPL(kjit_insn_has_rep_prefix);
EXPORT_SYMBOL_GPL(kjit_insn_branch_hint);
EXPORT_SYMBOL_GPL(kjit_insn_layout_hint);
EXPORT_SYMBOL_GPL(kjit_insn_branch_target);
EXPORT_SYMBOL_GPL(kjit_insn_is_cmpxchg);
EXPORT_SYMBOL_GPL(kjit_insn_reads_memory);
EXPORT_SYMBOL_GPL(kjit_insn_writes_memory);
EXPORT_SYMBOL_GPL(kjit_insn_memory_size);
EXPORT_SYMBOL_GPL(kjit_insn_mem_segment);
EXPORT_SYMBOL_GPL(kjit_insn_mem_on_stack);
EXPORT_SYMBOL_GPL(kjit_insn_modifies_flags);
EXPORT_SYMBOL_GPL(kjit_insn_mnemonic);
EXPORT_SYMBOL_GPL(kjit_insn_is_memory_hint);
EXPORT_SYMBOL_GPL(kjit_insn_bit_offset_reg);
EXPORT_SYMBOL_GPL(kjit_insn_writes_nothing);
EXPORT_SYMBOL_GPL(kjit_insn_atomic_old_value_reg);
EXPORT_SYMBOL_GPL(kjit_insn_loaded_value_reg);
EXPORT_SYMBOL_GPL(kjit_insn_comparison);
EXPORT_SYMBOL_GPL(kjit_insn_string_op);
EXPORT_SYMBOL_GPL(kjit_insn_string_width);
EXPORT_SYMBOL_GPL(kjit_insn_nondeterministic_reg);
EXPORT_SYMBOL_GPL(kjit_insn_nondet_kind);
EXPORT_SYMBOL_GPL(kjit_insn_gs_swapped);
EXPORT_SYMBOL_GPL(kjit_block_pc);
EXPORT_SYMBOL_GPL(kjit_block_insn_count);
EXPORT_SYMBOL_GPL(kjit_block_insn);
EXPORT_SYMBOL_GPL(kjit_block_is_routine_start);
EXPORT_SYMBOL_GPL(kjit_block_runs_with_previous);
EXPORT_SYMBOL_GPL(kjit_block_runs_unless_previous_taken);
EXPORT_SYMBOL_GPL(kjit_block_may_lead_run);
EXPORT_SYMBOL_GPL(kjit_block_cache_half);
EXPORT_SYMBOL_GPL(kjit_insert_call);
EXPORT_SYMBOL_GPL(kjit_insert_call_argv);
EXPORT_SYMBOL_GPL(kjit_insert_call_if);
EXPORT_SYMBOL_GPL(kjit_insert_context_call);
EXPORT_SYMBOL_GPL(kjit_alloc);
EXPORT_SYMBOL_GPL(kjit_alloc_percpu);
EXPORT_SYMBOL_GPL(kjit_percpu_sum_u64);
EXPORT_SYMBOL_GPL(kjit_percpu_copy);
EXPORT_SYMBOL_GPL(kjit_percpu_ncpus);
EXPORT_SYMBOL_GPL(kjit_register_plugin);
EXPORT_SYMBOL_GPL(kjit_unregister_plugin);
EXPORT_SYMBOL_GPL(kjit_engine_get_stats);
