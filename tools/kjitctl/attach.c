// SPDX-License-Identifier: GPL-2.0
/* kjitctl attach TARGET...: system calls (openat, or its number), kernel
 * functions by name, all-syscalls; globs and -f FILE (one name a line, -
 * = stdin): attachable functions by their own names, --batch N a request. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include "kjitctl.h"

enum { OPT_BATCH = 256 };
const struct option attach_options[] = {
  {"batch", required_argument, NULL, OPT_BATCH}, {"file", required_argument, NULL, 'f'}, {NULL, 0, NULL, 0}};

/* One target by KJIT_IOC_ATTACH: a system call name first (openat ->
 * __x64_sys_openat), then the name itself, or a system call number (no
 * kallsyms scan: this stays cheap in loops). */
static int attach_one(const char *a)
{
  struct kjit_ioc_target t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  char *end;
  unsigned long nr = strtoul(a, &end, 10);
  if (*a && !*end) {
    t.flags = KJIT_TARGET_SYSNR;
    t.addr = nr;
  } else {
    if (strlen(a) + 10 >= sizeof t.name) { fprintf(stderr, "kjitctl: name too long\n"); return 2; }
    if (strncmp(a, "__x64_sys_", 10)) {
      snprintf(t.name, sizeof t.name, "__x64_sys_%s", a);
      if (ioctl(kjit_fd, KJIT_IOC_ATTACH, &t) == 0) {
        printf("attached %s at 0x%llx\n", t.name, (unsigned long long)t.addr);
        return 0;
      }
      if (errno != ENOENT) { fprintf(stderr, "kjitctl: attach %s: %s\n", t.name, strerror(errno)); return 1; }
      memset(&t, 0, sizeof t);
      t.size = sizeof t;
    }
    strcpy(t.name, a);
  }
  if (ioctl(kjit_fd, KJIT_IOC_ATTACH, &t) < 0) {
    fprintf(stderr, "kjitctl: attach %s: %s%s\n", a, strerror(errno), attach_refusal(errno));
    return 1;
  }
  printf("attached %s at 0x%llx\n", t.name, (unsigned long long)t.addr);
  return 0;
}

/* Named targets (no numbers, no all-syscalls) in one KJIT_IOC_ATTACH_MANY:
 * one ftrace update and one direct ops for all of them (the module waits
 * for RCU-tasks once per ops when it lets go of them).  Each name is tried
 * as a system call (__x64_sys_NAME) first; those the kernel does not have
 * go in a second request under their own name.  A request the module
 * refuses as a whole (another ftrace user on one of them) is retried one
 * name at a time, which says which. */
static int attach_named(char **argv, int n)
{
  char *names = calloc((size_t)n, KJIT_NAME_MAX);
  int32_t *res = calloc((size_t)n, sizeof *res), *got = calloc((size_t)n, sizeof *got);
  int rc = 0;
  if (!names || !res || !got) { free(names); free(res); free(got); return 1; }
  for (int pass = 0; pass < 2; pass++) {
    int m = 0;
    for (int i = 0; i < n; i++) {
      char *slot = names + (size_t)i * KJIT_NAME_MAX;
      if (pass == 0)
        snprintf(slot, KJIT_NAME_MAX, "%s%s", strncmp(argv[i], "__x64_sys_", 10) ? "__x64_sys_" : "", argv[i]);
      else if (res[i] == -ENOENT && strcmp(slot, argv[i]))
        snprintf(slot, KJIT_NAME_MAX, "%s", argv[i]);   /* not a system call: the name itself */
      else
        slot[0] = 0;   /* settled by the first request; an empty slot is answered -EINVAL */
      m += slot[0] != 0;
    }
    if (!m) break;
    struct kjit_ioc_attach_many req = {sizeof req, (uint32_t)n, (uint64_t)(uintptr_t)names,
                                       (uint64_t)(uintptr_t)got};
    int whole = ioctl(kjit_fd, KJIT_IOC_ATTACH_MANY, &req) < 0;
    for (int i = 0; i < n; i++) {
      const char *slot = names + (size_t)i * KJIT_NAME_MAX;
      if (!slot[0]) continue;
      if (whole) {
        rc |= attach_one(argv[i]);
        res[i] = 0;
      } else if (!(res[i] = got[i])) {
        printf("attached %s\n", slot);
      }
    }
    if (whole) break;
  }
  for (int i = 0; i < n; i++) {
    if (!res[i]) continue;
    fprintf(stderr, "kjitctl: attach %s: %s%s\n", argv[i], strerror(-res[i]), attach_refusal(-res[i]));
    rc = 1;
  }
  free(names);
  free(res);
  free(got);
  return rc;
}

static double now_ms(void)
{
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

/* Attaches functions by their own names, `batch` names a request
 * (KJIT_IOC_ATTACH_MANY: one ftrace update and one direct ops each; 0: all
 * in one).  Prints one line per request and a total; each refused name
 * with its reason on stderr.  A name already attached (before, or as
 * another name of the same function: __x64_sys_fork and __do_sys_fork
 * share an address) is not a refusal.  0 when no name was refused. */
int attach_bulk(struct names *s, size_t batch)
{
  names_uniq(s);
  if (!batch || batch > s->n) batch = s->n;
  size_t attached = 0, refused = 0, already = 0, requests = 0;
  int rc = 0;
  double t0 = now_ms();
  for (size_t off = 0; off < s->n; off += batch) {
    size_t n = s->n - off < batch ? s->n - off : batch;
    char *buf = calloc(n, KJIT_NAME_MAX);
    int32_t *res = calloc(n, sizeof *res);
    if (!buf || !res) { fprintf(stderr, "kjitctl: out of memory\n"); free(buf); free(res); return 1; }
    for (size_t i = 0; i < n; i++) snprintf(buf + i * KJIT_NAME_MAX, KJIT_NAME_MAX, "%s", s->v[off + i]);
    struct kjit_ioc_attach_many m = {sizeof m, (uint32_t)n, (uint64_t)(uintptr_t)buf, (uint64_t)(uintptr_t)res};
    double t = now_ms();
    int r = ioctl(kjit_fd, KJIT_IOC_ATTACH_MANY, &m);
    int e = errno;
    requests++;
    if (r < 0) {
      fprintf(stderr, "kjitctl: attach request %zu (%zu names from %s): %s%s\n", requests, n, s->v[off],
              strerror(e), attach_refusal(e));
      refused += n;
      rc = 1;
    } else {
      attached += (size_t)r;
      for (size_t i = 0; i < n; i++) {
        if (!res[i]) continue;
        fprintf(stderr, "kjitctl: attach %s: %s\n", s->v[off + i], refusal(-res[i]));
        if (res[i] == -EEXIST) {
          already++;
        } else {
          refused++;
          rc = 1;
        }
      }
      printf("request %zu: attached %d of %zu in %.0f ms\n", requests, r, n, now_ms() - t);
    }
    fflush(stdout);
    free(buf);
    free(res);
  }
  printf("attached %zu functions in %zu requests (%.0f ms), %zu already attached, refused %zu\n",
         attached, requests, now_ms() - t0, already, refused);
  return rc;
}

/* Numbers and names too long for a system call prefix go one by one; the
 * other names in one request; globs and files through attach_bulk. */
int cmd_attach(int argc, char **argv)
{
  int rc = 0, nnamed = 0, c;
  char **named = calloc((size_t)argc + 1, sizeof *named);
  struct names *bulk = names_new();
  size_t batch = 0;
  int bulk_asked = 0;
  if (!named || !bulk) return 1;
  if (argc < 2) { free(named); return usage(); }
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":f:", attach_options, NULL)) != -1) {
    switch (c) {
      case 'f': rc |= names_from_file(optarg, bulk); bulk_asked = 1; break;
      case OPT_BATCH: {
        unsigned b;
        if (option_uint("attach", "--batch", optarg, UINT32_MAX, &b)) { free(named); return 2; }
        batch = b;
        break;
      }
      default: free(named); return usage();
    }
  }
  for (int i = optind; i < argc; i++) {
    const char *a = argv[i];
    char *end;
    if (strpbrk(a, "*?[")) {
      rc |= names_from_glob(a, bulk);
      bulk_asked = 1;
    } else if (!strcmp(a, "all-syscalls") || !strcmp(a, "all")) {
      rc |= attach_all_syscalls();
    } else if ((*a && (strtoul(a, &end, 10), !*end)) || strlen(a) + 10 >= KJIT_NAME_MAX) {
      rc |= attach_one(a);
    } else {
      named[nnamed++] = argv[i];
    }
  }
  if (nnamed == 1) rc |= attach_one(named[0]);   /* prints the address */
  else if (nnamed > 1) rc |= attach_named(named, nnamed);
  if (bulk_asked) rc |= attach_bulk(bulk, batch);
  free(named);
  return rc;
}
