// SPDX-License-Identifier: GPL-2.0
/* kjitctl list [GLOB...]: without GLOB, what is attached; with GLOBs, every
 * attachable function one of them matches (once), marked attached or
 * refused (why).  Without kjit.ko (or without root) it lists the
 * candidates instead: the functions ftrace can attach, with the refusals
 * known without the module (offline_verdicts.c). */
#include <fnmatch.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

/* What is attached, with the count on stderr. */
static int list_attached(void)
{
  struct kjit_ioc_results r;
  struct kjit_ioc_rec *recs = NULL;
  uint64_t cap = 1024;
  for (;;) {   /* until the records fit: the answer says how many exist */
    free(recs);
    recs = calloc(cap, sizeof *recs);
    if (!recs) { fprintf(stderr, "kjitctl: out of memory\n"); return 1; }
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    r.nrec = cap;
    r.rec_ptr = (uint64_t)(uintptr_t)recs;
    if (ioctl(kjit_fd, KJIT_IOC_LIST, &r) < 0) { perror("kjitctl: list"); free(recs); return 1; }
    if (r.nrec <= cap) break;
    cap = r.nrec + 1024;
  }
  char b[512];
  for (uint64_t i = 0; i < r.nrec; i++)
    printf("0x%llx %s\n", (unsigned long long)recs[i].pc, symbolize(recs[i].pc, b, sizeof b));
  fprintf(stderr, "%llu attached\n", (unsigned long long)r.nrec);
  free(recs);
  return 0;
}

/* The attachable functions the globs match, each once, in the order
 * found; 1 after a message when they match none. */
static int matching(char **globs, int nglobs, struct names *m)
{
  const struct names *a = attachable();
  if (!a->n) return 1;   /* attachable() said why */
  for (int g = 0; g < nglobs; g++)
    for (size_t i = 0; i < a->n; i++)
      if (!fnmatch(globs[g], a->v[i], 0)) names_add_new(m, a->v[i]);
  if (m->n) return 0;
  fprintf(stderr, "kjitctl: '%s'%s matches no attachable function%s\n", globs[0], nglobs > 1 ? " ..." : "",
          strncmp(globs[0], "__x64_sys_", 10) ? " (system calls are __x64_sys_NAME)" : "");
  return 1;
}

/* Every attachable function the globs match, marked attached or refused
 * (why), kjit.ko's verdicts. */
static int list_globs(char **globs, int nglobs)
{
  struct names m = {0};
  if (matching(globs, nglobs, &m)) return 1;
  int32_t *res = calloc(m.n, sizeof *res);
  if (!res || check_names(&m, res)) { perror("kjitctl: list"); return 1; }
  size_t ok = 0;
  for (size_t i = 0; i < m.n; i++) {
    if (!res[i]) { printf("%s\n", m.v[i]); ok++; }
    else if (res[i] == -EEXIST) { printf("%s attached\n", m.v[i]); ok++; }
    else printf("%s refused: %s\n", m.v[i], refusal(-res[i]));
  }
  fprintf(stderr, "%zu matching, %zu attachable by kjit, %zu refused\n", m.n, ok, m.n - ok);
  return 0;
}

/* The same without the module: candidates, and the refusals that can be
 * told from kallsyms and debugfs. */
static int list_candidates(char **globs, int nglobs)
{
  static char *all[] = {"*"};
  if (!nglobs) { globs = all; nglobs = 1; }
  const char *why = kjit_dev_errno == ENOENT ? "kjit.ko is not loaded, nothing is attached"
                                             : "/dev/kjit needs root, attached functions unknown";
  if (!attachable()->n) {
    fprintf(stderr, "kjitctl list: %s, and the candidates are unknown: neither %s nor %s is readable\n", why,
            kernel_path(filter_functions_paths[0]), kernel_path(filter_functions_paths[1]));
    return 1;
  }
  struct names m = {0};
  if (matching(globs, nglobs, &m)) return 1;
  fprintf(stderr, "kjitctl list: %s: listing candidates (functions ftrace can attach); kjit decides when"
                  " attaching; refusals known from %s\n", why, offline_verdict_sources());
  size_t refused = 0;
  for (size_t i = 0; i < m.n; i++) {
    const char *refusal_known = offline_refusal(m.v[i]);
    if (refusal_known) { printf("%s refused: %s\n", m.v[i], refusal_known); refused++; }
    else printf("%s\n", m.v[i]);
  }
  fprintf(stderr, "%zu matching, %zu candidates, %zu refused (without kjit.ko)\n", m.n, m.n - refused, refused);
  return 0;
}

int cmd_list(int argc, char **argv)
{
  if (argc > 1 && !strcmp(argv[1], "--")) { argv++; argc--; }   /* globs that start with - */
  if (kjit_fd < 0) return list_candidates(argv + 1, argc - 1);
  return argc > 1 ? list_globs(argv + 1, argc - 1) : list_attached();
}
