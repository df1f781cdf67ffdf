// SPDX-License-Identifier: GPL-2.0
/* kjitctl's name lists (tools/kjitctl/names.c) at kallsyms size: the
 * expansion of overlapping broad globs (record -e 'a*,*', list 'vfs_*' '*')
 * adds every match unless already there.  Checks the answers (order kept,
 * each name once, names_uniq sorted) and that it stays linear: 150,000
 * names and as many repeats in well under a second, where the scan it
 * replaces (each match compared with every earlier name) is timed on
 * fewer names for the comparison it prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kjitctl.h"

#define NNAMES 150000
#define NSCAN 10000

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The replaced way: a linear scan of the earlier names per name. */
static void add_by_scan(struct names *s, const char *name)
{
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], name)) return;
  names_add(s, name);
}

static char (*synthetic(size_t n))[48]
{
  char (*v)[48] = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++)   /* kernel-like names, not in sorted order */
    snprintf(v[i], sizeof v[i], "%s_%zx_%s", i % 3 ? "vfs" : "ext4", (i * 2654435761u) % 1000003, "read_iter");
  return v;
}

int main(void)
{
  int failed = 0;
  char (*v)[48] = synthetic(NNAMES);
  struct names s = {0};
  double t = now_ms();
  for (int pass = 0; pass < 2; pass++)   /* the second pass: all repeats */
    for (size_t i = 0; i < NNAMES; i++) names_add_new(&s, v[i]);
  double hash_ms = now_ms() - t;
  if (s.n != NNAMES) { printf("FAIL: %zu names, want %d\n", s.n, NNAMES); failed = 1; }
  for (size_t i = 0; i < s.n && !failed; i++)
    if (strcmp(s.v[i], v[i])) { printf("FAIL: order: %zu is %s, want %s\n", i, s.v[i], v[i]); failed = 1; }
  if (!names_has(&s, v[NNAMES - 1]) || names_has(&s, "vfs_absent")) { printf("FAIL: names_has\n"); failed = 1; }
  names_uniq(&s);
  for (size_t i = 1; i < s.n; i++)
    if (strcmp(s.v[i - 1], s.v[i]) >= 0) { printf("FAIL: names_uniq not sorted at %zu\n", i); failed = 1; break; }
  if (!names_has(&s, v[7]) || s.n != NNAMES) { printf("FAIL: index after names_uniq\n"); failed = 1; }
  names_add_new(&s, v[3]);
  if (s.n != NNAMES) { printf("FAIL: a repeat added after names_uniq\n"); failed = 1; }

  struct names old = {0};
  t = now_ms();
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < NSCAN; i++) add_by_scan(&old, v[i]);
  double scan_ms = now_ms() - t;
  struct names small = {0};
  t = now_ms();
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < NSCAN; i++) names_add_new(&small, v[i]);
  double small_ms = now_ms() - t;
  printf("names: %d names + %d repeats: %.1f ms with the hash index; %d + %d: %.1f ms by the old scan,"
         " %.1f ms with the index (the scan is quadratic: ~%.0f ms at %d)\n", NNAMES, NNAMES, hash_ms, NSCAN,
         NSCAN, scan_ms, small_ms, scan_ms * ((double)NNAMES / NSCAN) * ((double)NNAMES / NSCAN), NNAMES);
  /* generous: a loaded test machine, not the algorithm, could reach it */
  if (hash_ms > 1500) { printf("FAIL: %.0f ms for %d names: not linear\n", hash_ms, NNAMES); failed = 1; }
  printf("names: %s\n", failed ? "FAIL" : "PASS");
  return failed;
}
