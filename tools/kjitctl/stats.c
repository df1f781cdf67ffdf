// SPDX-License-Identifier: GPL-2.0
/* kjitctl stats: the engine's and the module's counters, "key value" lines,
 * and the completion line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

/* "text_flush_cause ADDR SYMBOL by CALLER < ITS CALLER ...": the change
 * that made the last text flush, named from /proc/kallsyms. */
static void print_flush_cause(const struct kjit_ioc_stats *s)
{
  char b[160];
  if (!s->text_flush_addr) return;
  printf("%-18s 0x%llx %s by", "text_flush_cause", (unsigned long long)s->text_flush_addr,
         symbolize(s->text_flush_addr, b, sizeof b));
  for (unsigned k = 0; k < sizeof s->text_flush_by / sizeof s->text_flush_by[0] && s->text_flush_by[k]; k++)
    printf("%s %s", k ? " <" : "", symbolize(s->text_flush_by[k], b, sizeof b));
  printf("\n");
}

int cmd_stats(int argc, char **argv)
{
  struct kjit_ioc_stats s;
  if (get_stats(&s) < 0) { perror("kjitctl: stats"); return 1; }
#define P(f) printf("%-18s %llu\n", #f, (unsigned long long)s.f)
  P(nattached); P(blocks_built); P(insns_translated); P(fallbacks); P(direct_links);
  P(chain_links); P(dispatcher_exits); P(indirect_misses); P(flushes);
  P(cache_bytes_used); P(arena_bytes_used); P(inlined_calls); P(outlined_calls);
  P(entries); P(entry_declined); P(entry_skipped); P(gate_escapes); P(reclaims); P(icount);
  P(filtered); P(exits); P(extable_mirrored); P(extable_declined); P(extable_entries);
  P(cache_size); P(text_events); P(text_flushes); P(pid); P(inline_instrumentation); P(use_liveness); P(flush_every_entry);
  P(stop_addresses);
  P(entered); P(completed); P(left_native_call); P(left_native_insn); P(left_declined);
  P(left_cache_full); P(left_sleep_full); P(left_sleep_off); P(sleep_lost); P(task_exits);
  P(sleeps_followed); P(sleeps_resumed); P(sleeping); P(kjit_control);
  P(fast_entries); P(direct_ops); P(entry_redirected); P(trace_fallthroughs); P(ibl_full);
  P(predicted_returns); P(entry_nested); P(left_hooked);
  P(calls_entered); P(calls_declined); P(calls_skipped); P(calls_nested); P(calls_redirected); P(calls_filtered);
  P(calls_declined_cache_full); P(calls_declined_unbuilt); P(calls_declined_hooked); P(calls_declined_native);
  P(generations); P(left_nested_entry); P(text_site_events); P(module_flushes);
  P(text_retires); P(traces_retired); P(blocks_retired);
  print_flush_cause(&s);
  printf("%-18s %llu\n", "left_unknown", unknown_departures(&s));
  printf("%-18s %s\n", "tool", tool_name(s.tool));
  print_completion(stdout, &s);
  return 0;
}
