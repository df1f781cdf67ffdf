// SPDX-License-Identifier: GPL-2.0
/* kjitctl blocks [--json]: bbcount's blocks, live: per block start address
 * its count and symbol. */
#include <stdio.h>
#include <stdlib.h>
#include "kjitctl.h"

enum { OPT_JSON = 256 };
const struct option blocks_options[] = {{"json", no_argument, NULL, OPT_JSON}, {NULL, 0, NULL, 0}};

int cmd_blocks(int argc, char **argv)
{
  int json, bad = parse_json_only(argc, argv, blocks_options, &json);
  if (bad) return bad;
  struct kjit_ioc_results r;
  struct kjit_ioc_rec *recs = get_results(&r);
  if (r.tool != KJIT_TOOL_BBCOUNT) { fprintf(stderr, "kjitctl: blocks needs --tool bbcount\n"); return 1; }
  uint64_t n = r.nrec;
  struct pcnt *p = calloc(n + 1, sizeof *p);
  size_t k = aggregate(recs, n, p);
  print_pcnt("blocks", p, k, json ? PCNT_JSON_DOCUMENT : PCNT_TEXT, 1, dropped_of(&r));
  return 0;
}
