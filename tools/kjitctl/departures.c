// SPDX-License-Identifier: GPL-2.0
/* kjitctl departures [--json] [--all]: where entries left the cache, one
 * line per native target and reason, most frequent first (completions, the
 * returns to callers, are left out unless --all). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

enum { OPT_JSON = 256, OPT_ALL };
const struct option departures_options[] = {
  {"json", no_argument, NULL, OPT_JSON}, {"all", no_argument, NULL, OPT_ALL}, {NULL, 0, NULL, 0}};

static const char *const departure_names[] = {"completed", "native_call", "native_insn", "declined",
                                              "cache_full", "hooked"};
static int rec_count_desc(const void *a, const void *b)
{
  const struct kjit_ioc_rec *x = a, *y = b;
  return x->count < y->count ? 1 : x->count > y->count ? -1 : (x->pc > y->pc) - (x->pc < y->pc);
}

int cmd_departures(int argc, char **argv)
{
  int json = 0, all = 0, c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", departures_options, NULL)) != -1) {
    if (c == OPT_JSON) json = 1;
    else if (c == OPT_ALL) all = 1;
    else return usage();
  }
  if (optind < argc) return usage();
  uint64_t cap = 4096;
  struct kjit_ioc_rec *recs = calloc(cap, sizeof *recs);
  struct kjit_ioc_results r = {.size = sizeof r, .nrec = cap, .rec_ptr = (uint64_t)(uintptr_t)recs};
  char b[512];
  if (!recs || ioctl(kjit_fd, KJIT_IOC_DEPARTURES, &r) < 0) { perror("kjitctl: departures"); return 1; }
  uint64_t n = r.nrec < cap ? r.nrec : cap;
  qsort(recs, n, sizeof *recs, rec_count_desc);
  if (json) { json_begin("departures"); printf(", \"departures\": ["); }
  else printf("%-12s %12s  %s\n", "reason", "count", "target");
  int first = 1;
  for (uint64_t i = 0; i < n; i++) {
    unsigned why = (unsigned)recs[i].pid_type;
    if (!recs[i].count || (!all && why == 0)) continue;
    const char *wn = why < sizeof departure_names / sizeof *departure_names ? departure_names[why] : "?";
    if (json) {
      printf("%s\n  {\"reason\": \"%s\", \"count\": %llu, \"addr\": \"0x%llx\", \"symbol\": ", first ? "" : ",",
             wn, (unsigned long long)recs[i].count, (unsigned long long)recs[i].pc);
      json_str(symbolize(recs[i].pc, b, sizeof b));
      printf("}");
    } else {
      printf("%-12s %12llu  %s\n", wn, (unsigned long long)recs[i].count, symbolize(recs[i].pc, b, sizeof b));
    }
    first = 0;
  }
  if (json) printf("\n]}\n");
  free(recs);
  return 0;
}
