// SPDX-License-Identifier: GPL-2.0
/* kjitctl list [GLOB]: without GLOB, what is attached; with it, every
 * attachable function it matches, marked attached or refused (why). */
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

/* Every attachable function GLOB matches, marked attached or refused (why). */
static int list_glob(const char *glob)
{
  const struct names *a = attachable();
  struct names m = {0};
  for (size_t i = 0; i < a->n; i++)
    if (!fnmatch(glob, a->v[i], 0)) names_add(&m, a->v[i]);
  if (!m.n) {
    fprintf(stderr, "kjitctl: '%s' matches no attachable function%s\n", glob,
            strncmp(glob, "__x64_sys_", 10) ? " (system calls are __x64_sys_NAME)" : "");
    return 1;
  }
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

int cmd_list(int argc, char **argv)
{
  return argc > 1 ? list_glob(argv[1]) : list_attached();
}
