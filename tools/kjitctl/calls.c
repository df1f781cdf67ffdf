// SPDX-License-Identifier: GPL-2.0
/* kjitctl calls [--json]: per called function, live, its calls and symbol
 * (entry_count's counters, or calltrace's and callstack's events counted). */
#include <stdio.h>
#include <stdlib.h>
#include "kjitctl.h"

enum { OPT_JSON = 256 };
const struct option calls_options[] = {{"json", no_argument, NULL, OPT_JSON}, {NULL, 0, NULL, 0}};

int cmd_calls(int argc, char **argv)
{
  int json, bad = parse_json_only(argc, argv, calls_options, &json);
  if (bad) return bad;
  struct kjit_ioc_results r;
  struct kjit_ioc_rec *recs = get_results(&r);
  uint64_t n = r.nrec;
  struct pcnt *p = calloc(n + 1, sizeof *p);
  size_t k = 0;
  if (r.tool == KJIT_TOOL_ENTRY_COUNT) k = aggregate(recs, n, p);
  else if (r.tool == KJIT_TOOL_CALLTRACE || r.tool == KJIT_TOOL_CALLSTACK) {
    for (uint64_t i = 0; i < n; i++) {
      unsigned type = recs[i].pid_type & 0xff;
      if (r.tool == KJIT_TOOL_CALLSTACK && type != 1 && type != 2) continue;
      if (!recs[i].pc) continue;
      p[k].pc = recs[i].pc; p[k].count = 1; k++;
    }
    struct kjit_ioc_rec *tmp = calloc(k + 1, sizeof *tmp);
    for (size_t i = 0; i < k; i++) { tmp[i].pc = p[i].pc; tmp[i].count = 1; }
    k = aggregate(tmp, k, p);
  } else { fprintf(stderr, "kjitctl: calls needs --tool entry_count, calltrace or callstack\n"); return 1; }
  print_pcnt("calls", p, k, json ? PCNT_JSON_DOCUMENT : PCNT_TEXT, 1, dropped_of(&r));
  return 0;
}
