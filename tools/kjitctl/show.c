// SPDX-License-Identifier: GPL-2.0
/* kjitctl show [--json|--folded|--trace]: the live results of the
 * configured tool, as the module holds them now. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kjitctl.h"

enum { OPT_JSON = 256, OPT_FOLDED, OPT_TRACE };
const struct option show_options[] = {
  {"json", no_argument, NULL, OPT_JSON}, {"folded", no_argument, NULL, OPT_FOLDED},
  {"trace", no_argument, NULL, OPT_TRACE}, {NULL, 0, NULL, 0}};

/* The statistics a report starts with (its completion line or field), or
 * NULL when they could not be read. */
static const struct kjit_ioc_stats *completion;

/* Folded stacks from callstack events: per thread a stack of (function,
 * call-rsp); a frame is over when the same thread calls or enters at an
 * rsp >= its own, or returns with rsp >= call-rsp - 8. */
struct frame { unsigned long long fn, sp; };
struct thr { unsigned pid; int depth; struct frame st[256]; };
/* Each distinct stack once (a hash index: a long trace has a few distinct
 * stacks and many events) and its count. */
static struct names *fold_keys;
static unsigned long long *fold_counts;
static size_t fold_cap;
static void fold_add(const char *key)
{
  if (!fold_keys && !(fold_keys = names_new())) { perror("kjitctl show"); exit(1); }
  size_t at = names_find(fold_keys, key);
  if (at) { fold_counts[at - 1]++; return; }
  if (fold_keys->n == fold_cap) {
    fold_cap = fold_cap ? fold_cap * 2 : 1024;
    if (!(fold_counts = realloc(fold_counts, fold_cap * sizeof *fold_counts))) { perror("kjitctl show"); exit(1); }
  }
  names_add(fold_keys, key);
  fold_counts[fold_keys->n - 1] = 1;
}
static int fold_cmp(const void *a, const void *b)
{
  return strcmp(fold_keys->v[*(const size_t *)a], fold_keys->v[*(const size_t *)b]);
}

/* dropped: events the ring overwrote (JSON field; the text forms are
 * `a;b;c count` lines for flamegraph.pl, so the caller says it elsewhere). */
static void folded(struct kjit_ioc_rec *recs, uint64_t n, int json, int depth_listing,
                   long long dropped)
{
  struct thr *th = NULL;
  size_t nth = 0;
  char b[512];
  static char key[65536];
  for (uint64_t i = 0; i < n; i++) {
    unsigned type = recs[i].pid_type & 0xff, pid = (unsigned)(recs[i].pid_type >> 8);
    unsigned long long pc = recs[i].pc, sp = recs[i].sp;
    if (!type) continue;
    struct thr *t = NULL;
    for (size_t j = 0; j < nth; j++) if (th[j].pid == pid) { t = &th[j]; break; }
    if (!t) { th = realloc(th, (nth + 1) * sizeof *th); t = &th[nth++]; t->pid = pid; t->depth = 0; }
    if (type == 1 || type == 2) {
      while (t->depth && t->st[t->depth - 1].sp <= sp) t->depth--;
      if (type == 2 && !t->depth) continue;     /* a call outside any entry */
      if (t->depth < 256) { t->st[t->depth].fn = pc; t->st[t->depth].sp = sp; t->depth++; }
      if (depth_listing) {
        printf("%u %*s%s %s\n", pid, 2 * (t->depth - 1), "", type == 1 ? "entry" : "call", symbolize(pc, b, sizeof b));
        continue;
      }
      size_t k = 0;
      key[0] = 0;
      for (int d = 0; d < t->depth; d++) {
        const char *s = symbolize(t->st[d].fn, b, sizeof b);
        size_t l = strlen(s);
        if (k + l + 2 >= sizeof key) break;
        if (d) key[k++] = ';';
        memcpy(key + k, s, l); k += l; key[k] = 0;
      }
      fold_add(key);
    } else if (type == 3) {
      while (t->depth && t->st[t->depth - 1].sp <= sp + 8) {
        t->depth--;
        if (depth_listing) printf("%u %*sreturn\n", pid, 2 * t->depth, "");
        if (t->st[t->depth].sp == sp + 8) break;
      }
    }
  }
  if (depth_listing) return;
  size_t nfolds = fold_keys ? fold_keys->n : 0;
  size_t *order = malloc((nfolds ? nfolds : 1) * sizeof *order);
  if (!order) { perror("kjitctl show"); exit(1); }
  for (size_t i = 0; i < nfolds; i++) order[i] = i;
  qsort(order, nfolds, sizeof *order, fold_cmp);
  if (json) {
    json_open("callstack", completion); printf(", \"folded\": [");
    for (size_t i = 0; i < nfolds; i++) {
      printf("%s\n  {\"stack\": ", i ? "," : "");
      json_str(fold_keys->v[order[i]]);
      printf(", \"count\": %llu}", fold_counts[order[i]]);
    }
    printf("\n], \"dropped\": %lld}\n", dropped);
  } else {
    for (size_t i = 0; i < nfolds; i++) printf("%s %llu\n", fold_keys->v[order[i]], fold_counts[order[i]]);
  }
  free(order);
}

int cmd_show(int argc, char **argv)
{
  int json = 0, fold = 0, trace = 0, c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", show_options, NULL)) != -1) {
    if (c == OPT_JSON) json = 1;
    else if (c == OPT_FOLDED) fold = 1;
    else if (c == OPT_TRACE) trace = 1;
    else return usage();
  }
  if (optind < argc) return usage();
  struct kjit_ioc_results r;
  struct kjit_ioc_rec *recs = get_results(&r);
  const char *tn = tool_name(r.tool);
  char b[512];
  uint64_t n = r.nrec;
  static struct kjit_ioc_stats stats;
  completion = get_stats(&stats) == 0 ? &stats : NULL;
  if (!json && completion) print_completion((fold || trace) ? stderr : stdout, completion);
  switch (r.tool) {
    case KJIT_TOOL_NONE:
      if (json) { json_open("none", completion); printf("}\n"); } else printf("tool none: no results\n");
      return 0;
    case KJIT_TOOL_ICOUNT:
      if (json) { json_open("icount", completion); printf(", \"instructions\": %llu}\n", (unsigned long long)r.scalars[0]); }
      else printf("%-24s %llu\n", "instructions", (unsigned long long)r.scalars[0]);
      return 0;
    case KJIT_TOOL_BRANCH_HINTS: {
      const char *k[] = {"executed", "taken", "predicted_right", "predicted_wrong", "hinted", "hint_right"};
      if (json) { json_open("branch_hints", completion); for (int i = 0; i < 6; i++) printf(", \"%s\": %llu", k[i], (unsigned long long)r.scalars[i]); printf("}\n"); }
      else for (int i = 0; i < 6; i++) printf("%-24s %llu\n", k[i], (unsigned long long)r.scalars[i]);
      return 0;
    }
    case KJIT_TOOL_LOCK_CONTENTION:
      if (json) { json_open("lock_contention", completion); printf(", \"attempts\": %llu, \"failures\": %llu}\n", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[1]); }
      else printf("%-24s %llu\n%-24s %llu\n", "cmpxchg_attempts", (unsigned long long)r.scalars[0], "cmpxchg_failures", (unsigned long long)r.scalars[1]);
      return 0;
    case KJIT_TOOL_BBCOUNT:
    case KJIT_TOOL_ENTRY_COUNT: {
      struct pcnt *p = calloc(n + 1, sizeof *p);
      size_t k = aggregate(recs, n, p);
      /* counters: the module's own records, before merging by address;
       * equal to distinct when it keeps one counter per block or routine. */
      const char *storage = r.tool != KJIT_TOOL_BBCOUNT ? "" : r.scalars[2] ? " (per-CPU)" : " (locked adds)";
      if (!json) {
        printf("tool %s: %s %llu, distinct %zu, counters %llu%s", tn, r.tool == KJIT_TOOL_BBCOUNT ? "blocks executed" : "routines", (unsigned long long)(r.tool == KJIT_TOOL_BBCOUNT ? r.scalars[0] : k), k, (unsigned long long)n, storage);
        /* runs: translations whose one counter counts several blocks (docs/plugin-api.md) */
        if (r.tool == KJIT_TOOL_BBCOUNT) printf(", runs %llu of %llu", (unsigned long long)r.scalars[3], (unsigned long long)r.scalars[4]);
        printf("\n");
      } else if (r.tool == KJIT_TOOL_BBCOUNT) { json_open("bbcount", completion); printf(", \"total\": %llu, \"counters\": %llu, \"counters_percpu\": %s, \"dropped\": %llu, \"runs\": %llu, \"runs_max\": %llu, \"data\": ", (unsigned long long)r.scalars[0], (unsigned long long)n, r.scalars[2] ? "true" : "false", (unsigned long long)r.scalars[1], (unsigned long long)r.scalars[3], (unsigned long long)r.scalars[4]); }
      else { json_open("entry_count", completion); printf(", \"counters\": %llu, \"dropped\": %llu, \"data\": ", (unsigned long long)n, (unsigned long long)r.scalars[1]); }
      print_pcnt(r.tool == KJIT_TOOL_BBCOUNT ? "blocks" : "calls", p, k, json ? PCNT_JSON_VALUE : PCNT_TEXT, 0,
                 json ? -1 : dropped_of(&r));
      if (json) printf("}\n");
      return 0;
    }
    case KJIT_TOOL_BRANCHES: {
      /* The conditional branches (the block records come first); kjitctl
       * report reads the blocks from a recording. */
      uint64_t nbr = 0;
      if (json) { json_open("branches", completion); printf(", \"blocks_total\": %llu, \"dropped\": %llu, \"branches\": [", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[3]); }
      else printf("tool branches: blocks executed %llu, branches dropped %llu\n%-48s %12s %12s\n", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[3], "branch", "taken", "not_taken");
      for (uint64_t i = 0; i < n; i++) {
        if ((recs[i].pid_type & 0xff) != KJIT_REC_BRANCH) continue;
        symbolize(recs[i].pc, b, sizeof b);
        if (json) { printf("%s{\"branch\": ", nbr ? ", " : ""); json_str(b); printf(", \"taken\": %llu, \"not_taken\": %llu}", (unsigned long long)recs[i].count, (unsigned long long)recs[i].sp); }
        else printf("%-48s %12llu %12llu\n", b, (unsigned long long)recs[i].count, (unsigned long long)recs[i].sp);
        nbr++;
      }
      if (json) printf("]}\n");
      return 0;
    }
    case KJIT_TOOL_CALLTRACE:
      if (json) {
        json_open("calltrace", completion); printf(", \"calls\": %llu, \"dropped\": %llu, \"targets\": [", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[1]);
        for (uint64_t i = 0; i < n; i++) { printf("%s", i ? ", " : ""); json_str(symbolize(recs[i].pc, b, sizeof b)); }
        printf("]}\n");
      } else {
        printf("tool calltrace: %llu calls (last %llu shown, oldest first)\n", (unsigned long long)r.scalars[0], (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) printf("%s\n", symbolize(recs[i].pc, b, sizeof b));
        printf("dropped %llu\n", (unsigned long long)r.scalars[1]);
      }
      return 0;
    case KJIT_TOOL_CALLSTACK:
      if (fold || json) folded(recs, n, json, 0, dropped_of(&r));
      else if (trace) folded(recs, n, 0, 1, dropped_of(&r));
      else {
        printf("tool callstack: %llu events (ring %llu); use --folded or --trace\n", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[1]);
        folded(recs, n, 0, 0, dropped_of(&r));
        printf("dropped %lld\n", dropped_of(&r));
      }
      /* Folded and trace lines are parsed by other tools: the count goes
       * to stderr there. */
      if (!json && (fold || trace)) fprintf(stderr, "dropped %lld\n", dropped_of(&r));
      return 0;
  }
  return 1;
}
