// SPDX-License-Identifier: GPL-2.0
/* What the module says of a measurement, printed alike by every command
 * that shows one: the completion line, JSON pieces, (address, count)
 * tables, and what the tool's table or ring could not keep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_escape.h"
#include "kjitctl.h"

/* Entries that ended in none of the ways the module counts (or are still
 * running): a departure kjit does not know about. */
unsigned long long unknown_departures(const struct kjit_ioc_stats *s)
{
  unsigned long long known = s->completed + s->left_native_call + s->left_native_insn +
                             s->left_declined + s->left_cache_full + s->left_hooked + s->left_sleep_full +
                             s->left_sleep_off + s->sleep_lost + s->task_exits + s->sleeping +
                             s->kjit_control + s->left_nested_entry;
  return s->entered > known ? s->entered - known : 0;
}

/* Calls of attached functions that entered the cache, of those kjit was
 * meant to follow (not the ones filtered out by design). */
static unsigned long long calls_meant(const struct kjit_ioc_stats *s)
{
  return s->calls_entered + s->calls_declined + s->calls_skipped + s->calls_nested + s->calls_redirected;
}

static void print_calls_covered(FILE *out, const struct kjit_ioc_stats *s)
{
  unsigned long long n = calls_meant(s);
  fprintf(out, "calls covered %.3f%% (%llu of %llu calls of the attached functions entered the cache;"
          " ran natively from their first instruction: declined %llu (cache full %llu, not built %llu, hooked %llu,"
          " never translated %llu), skipped %llu, nested %llu, redirected %llu;"
          " not followed by design (other tasks, the tool's filter): %llu)\n",
          n ? 100.0 * (double)s->calls_entered / (double)n : 100.0, (unsigned long long)s->calls_entered, n,
          (unsigned long long)s->calls_declined, (unsigned long long)s->calls_declined_cache_full,
          (unsigned long long)s->calls_declined_unbuilt, (unsigned long long)s->calls_declined_hooked,
          (unsigned long long)s->calls_declined_native, (unsigned long long)s->calls_skipped,
          (unsigned long long)s->calls_nested, (unsigned long long)s->calls_redirected,
          (unsigned long long)s->calls_filtered);
}

/* Two lines: the share of the calls that entered the cache (above), then
 * the share of the entries that ended which the cache followed to their
 * end (a return to the caller, or the task's exit), and why the others
 * left it.  Entries asleep now have not ended.  Every report starts with
 * them (stderr when stdout is data for another tool). */
void print_completion(FILE *out, const struct kjit_ioc_stats *s)
{
  print_calls_covered(out, s);
  unsigned long long not_ended = s->sleeping + s->kjit_control;
  unsigned long long ended = s->entered > not_ended ? s->entered - not_ended : 0;
  double pct = ended ? 100.0 * (double)(s->completed + s->task_exits) / (double)ended : 100.0;
  fprintf(out, "completion %.3f%% (%llu returned and %llu ended in their task's exit in the cache, of %llu"
          " entries that ended; left: native_call %llu,"
          " native_insn %llu, declined %llu, cache_full %llu, hooked %llu, nested_entry %llu, sleep_not_followed %llu, unknown %llu;"
          " asleep %llu; calls into kjit's own device, not counted: %llu)\n", pct,
          (unsigned long long)s->completed, (unsigned long long)s->task_exits,
          ended, (unsigned long long)s->left_native_call,
          (unsigned long long)s->left_native_insn, (unsigned long long)s->left_declined,
          (unsigned long long)s->left_cache_full, (unsigned long long)s->left_hooked,
          (unsigned long long)s->left_nested_entry,
          (unsigned long long)(s->left_sleep_full + s->left_sleep_off + s->sleep_lost),
          unknown_departures(s), (unsigned long long)s->sleeping,
          (unsigned long long)s->kjit_control);
}

void json_str(const char *s) { json_write_string(stdout, s, strlen(s)); }

void json_begin(const char *document)
{
  printf("{\"schema_version\": %d, \"document\": ", KJIT_JSON_SCHEMA_VERSION);
  json_str(document);
}

/* Opens a JSON report: {"tool": NAME, "completion": {...} (without
 * completion when the statistics could not be read; the caller continues
 * with ", ..." and closes the object). */
void json_open(const char *tool, const struct kjit_ioc_stats *s)
{
  json_begin("show");
  printf(", \"tool\": ");
  json_str(tool);
  if (!s) return;
  printf(", \"completion\": {\"entered\": %llu, \"completed\": %llu, \"left_native_call\": %llu,"
         " \"left_native_insn\": %llu, \"left_declined\": %llu, \"left_cache_full\": %llu, \"left_hooked\": %llu,"
         " \"left_nested_entry\": %llu,"
         " \"left_sleep_not_followed\": %llu, \"left_unknown\": %llu, \"asleep\": %llu,"
         " \"task_exit\": %llu, \"kjit_control\": %llu}", (unsigned long long)s->entered, (unsigned long long)s->completed,
         (unsigned long long)s->left_native_call, (unsigned long long)s->left_native_insn,
         (unsigned long long)s->left_declined, (unsigned long long)s->left_cache_full,
         (unsigned long long)s->left_hooked, (unsigned long long)s->left_nested_entry,
         (unsigned long long)(s->left_sleep_full + s->left_sleep_off + s->sleep_lost),
         unknown_departures(s), (unsigned long long)s->sleeping, (unsigned long long)s->task_exits,
         (unsigned long long)s->kjit_control);
  printf(", \"calls\": {\"entered\": %llu, \"declined\": %llu, \"declined_why\": {\"cache_full\": %llu,"
         " \"not_built\": %llu, \"hooked\": %llu, \"never_translated\": %llu}, \"skipped\": %llu, \"nested\": %llu,"
         " \"redirected\": %llu, \"filtered\": %llu}", (unsigned long long)s->calls_entered,
         (unsigned long long)s->calls_declined, (unsigned long long)s->calls_declined_cache_full,
         (unsigned long long)s->calls_declined_unbuilt, (unsigned long long)s->calls_declined_hooked,
         (unsigned long long)s->calls_declined_native, (unsigned long long)s->calls_skipped,
         (unsigned long long)s->calls_nested, (unsigned long long)s->calls_redirected,
         (unsigned long long)s->calls_filtered);
}

static int pc_cmp(const void *a, const void *b)
{
  const struct pcnt *x = a, *y = b;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

size_t aggregate(struct kjit_ioc_rec *recs, uint64_t n, struct pcnt *out)
{
  size_t k = 0;
  for (uint64_t i = 0; i < n; i++) { out[k].pc = recs[i].pc; out[k].count = recs[i].count; k++; }
  qsort(out, k, sizeof *out, pc_cmp);
  size_t j = 0;
  for (size_t i = 0; i < k; i++) {
    if (j && out[j - 1].pc == out[i].pc) out[j - 1].count += out[i].count;
    else out[j++] = out[i];
  }
  return j;
}

/* dropped >= 0: what the table or ring could not keep, as a last
 * `dropped N` line (JSON: a "dropped" field); < 0: nothing is dropped. */
void print_pcnt(const char *what, struct pcnt *p, size_t n, int json, int nonzero, long long dropped)
{
  char b[512];
  if (json) {
    if (json == PCNT_JSON_DOCUMENT) { json_begin(what); printf(", "); } else printf("{");
    printf("\"%s\": [", what);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
      if (nonzero && !p[i].count) continue;
      printf("%s\n  {\"addr\": \"0x%llx\", \"count\": %llu, \"symbol\": ", first ? "" : ",", p[i].pc, p[i].count);
      json_str(symbolize(p[i].pc, b, sizeof b));
      printf("}");
      first = 0;
    }
    if (dropped >= 0) printf("\n], \"dropped\": %lld}\n", dropped);
    else printf("\n]}\n");
    return;
  }
  printf("%-18s %12s  %s\n", "address", "count", "symbol");
  for (size_t i = 0; i < n; i++) {
    if (nonzero && !p[i].count) continue;
    printf("0x%-16llx %12llu  %s\n", p[i].pc, p[i].count, symbolize(p[i].pc, b, sizeof b));
  }
  if (dropped >= 0) printf("dropped %lld\n", dropped);
}

/* What the active tool's table or ring could not keep (the module's
 * scalars, uapi/kjit/ioctl.h); -1 for tools that keep everything. */
long long dropped_of(const struct kjit_ioc_results *r)
{
  switch (r->tool) {
    case KJIT_TOOL_BBCOUNT: case KJIT_TOOL_CALLTRACE: case KJIT_TOOL_ENTRY_COUNT:
      return (long long)r->scalars[1];
    case KJIT_TOOL_CALLSTACK: return (long long)r->scalars[2];
    default: return -1;
  }
}
