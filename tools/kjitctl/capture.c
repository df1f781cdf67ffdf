// SPDX-License-Identifier: GPL-2.0
/* kjitctl capture: records invocations of a system call (or function) with
 * kjit.ko's capture plugin and writes each as a capture file
 * (docs/capture-format.md, version 2) for `kjit-sim replay`.
 *
 *   kjitctl capture --syscall NAME|--func FUNC [--pid P] [--count N]
 *                   [--timeout S] [--buf-kb KB] [--first-complete] -o FILE
 *                   [-- CMD ARGS...]
 *
 * With CMD, kjitctl runs it (the pid filter is the child's) and collects when
 * it exits; without, it waits until N invocations ended or the timeout.  One
 * invocation gives FILE; N > 1 give FILE.1 ... FILE.N, or with
 * --first-complete only the first invocation that returned inside the cache
 * (one that left the cache is not replayable; one that slept is when its
 * RESUME records are there), as FILE.
 *
 *   kjitctl capture --all-syscalls -o DIR [--timeout S] [--buf-kb KB]
 *                   [--code-kb KB] [--all-code] [--pid P | -- CMD ARGS...]
 *
 * records one complete invocation of every distinct system call CMD, its
 * threads and its child processes make (capture_all.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include "kjitctl.h"
#include "progress.h"

enum { OPT_SYSCALL = 256, OPT_FUNC, OPT_PID, OPT_COUNT, OPT_TIMEOUT, OPT_BUF_KB, OPT_FIRST_COMPLETE,
       OPT_ALL_SYSCALLS, OPT_CODE_KB, OPT_ALL_CODE };
const struct option capture_options[] = {
  {"syscall", required_argument, NULL, OPT_SYSCALL}, {"func", required_argument, NULL, OPT_FUNC},
  {"pid", required_argument, NULL, OPT_PID}, {"count", required_argument, NULL, OPT_COUNT},
  {"timeout", required_argument, NULL, OPT_TIMEOUT}, {"buf-kb", required_argument, NULL, OPT_BUF_KB},
  {"output", required_argument, NULL, 'o'}, {"first-complete", no_argument, NULL, OPT_FIRST_COMPLETE},
  {"all-syscalls", no_argument, NULL, OPT_ALL_SYSCALLS}, {"code-kb", required_argument, NULL, OPT_CODE_KB},
  {"all-code", no_argument, NULL, OPT_ALL_CODE}, {NULL, 0, NULL, 0}};

/* Whether --all-syscalls comes before any `--`: it chooses the mode, and
 * with it which options are expected and their defaults. */
static int wants_all_syscalls(int argc, char **argv)
{
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--all-syscalls")) return 1;
  return 0;
}

/* 0, or 2 after "unexpected ARG" (an unknown option, one of the other mode,
 * one without its value, or an argument before `--`). */
static int parse_capture_args(int argc, char **argv, int all, struct capture_args *a)
{
  int c;
  const char *tok = NULL;
  memset(a, 0, sizeof *a);
  a->count = 1;
  a->timeout = all ? 0 : 30;
  a->buf_kb = all ? 65536 : 0;
  a->code_kb = 16384;
  opterr = 0;
  optind = 1;
  for (;;) {
    tok = optind < argc ? argv[optind] : NULL;
    if ((c = getopt_long(argc, argv, "+:o:", capture_options, NULL)) == -1) break;
    int single_only = c == OPT_SYSCALL || c == OPT_FUNC || c == OPT_COUNT || c == OPT_FIRST_COMPLETE;
    int all_only = c == OPT_CODE_KB || c == OPT_ALL_CODE;
    if (c == '?' || c == ':' || (all && single_only) || (!all && all_only)) {
      fprintf(stderr, "kjitctl capture: unexpected %s\n", tok);
      return 2;
    }
    switch (c) {
      case OPT_SYSCALL: a->sys = optarg; break;
      case OPT_FUNC: a->func = optarg; break;
      case OPT_PID: a->pid = strtoul(optarg, NULL, 0); break;
      case OPT_COUNT: a->count = strtoul(optarg, NULL, 0); break;
      case OPT_TIMEOUT: a->timeout = strtoul(optarg, NULL, 0); a->timeout_set = 1; break;
      case OPT_BUF_KB: a->buf_kb = strtoul(optarg, NULL, 0); break;
      case OPT_CODE_KB: a->code_kb = strtoul(optarg, NULL, 0); break;
      case 'o': a->out = optarg; break;
      case OPT_FIRST_COMPLETE: a->first_complete = 1; break;
      case OPT_ALL_CODE: a->all_code = 1; break;
      case OPT_ALL_SYSCALLS: break;
    }
  }
  if (tok && !strcmp(tok, "--")) a->cmdv = argv + optind;
  else if (optind < argc) { fprintf(stderr, "kjitctl capture: unexpected %s\n", argv[optind]); return 2; }
  return 0;
}

/* Arms a capture of `name` for pid (0: every task), runs the held workload
 * or waits for a->count invocations or the timeout, and stops it. */
static int capture_call(const struct capture_args *a, const char *name, unsigned pid, pid_t child, int go_w,
                        struct kjit_ioc_capture_read *r, unsigned char **evb, unsigned char **cob)
{
  struct kjit_ioc_target t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  snprintf(t.name, sizeof t.name, "%s", name);
  int attached = ioctl(kjit_fd, KJIT_IOC_ATTACH, &t) == 0;
  if (!attached && errno != EEXIST) {
    fprintf(stderr, "kjitctl capture: attach %s: %s\n", name, strerror(errno));
    if (child) kill(child, SIGKILL);
    return 1;
  }
  struct kjit_ioc_capture c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  snprintf(c.name, sizeof c.name, "%s", name);
  c.pid = pid;
  c.count = a->count;
  c.buf_kb = a->buf_kb;   /* 0: the module's default (4 MiB); it rejects > 64 MiB */
  if (ioctl(kjit_fd, KJIT_IOC_CAPTURE_START, &c) < 0) {
    fprintf(stderr, "kjitctl capture: start: %s\n", strerror(errno));
    if (child) kill(child, SIGKILL);
    return 1;
  }
  progress_begin("kjitctl capture");
  if (child) {
    int st;
    release_held(go_w);
    while (waitpid_progress(child, &st) == 0) {}
  } else {
    capture_wait_done(a->timeout);
  }
  progress_end();
  ioctl(kjit_fd, KJIT_IOC_CAPTURE_STOP, 0);
  if (capture_read(r, evb, cob)) return 1;
  if (attached) ioctl(kjit_fd, KJIT_IOC_DETACH, &t);
  return 0;
}

/* Writes the invocations of the event buffer as files (see the top). */
static int write_invocations(const struct capture_args *a, const char *name,
                             const struct kjit_ioc_capture_read *r, const unsigned char *evb,
                             struct capf_code *codes, size_t ncodes, unsigned *written)
{
  unsigned k = 0;
  int rc = 0;
  struct capf_invocation inv;
  const unsigned char *pos = evb;
  while (capf_next_invocation(&pos, evb + r->event_bytes, &inv)) {
    char path[4096], nm[256];
    if (a->first_complete) {
      uint32_t why = inv.end_reason;
      /* A slept invocation replays through its RESUME records; a module
       * that does not write them leaves it unreplayable. */
      if (why != KJIT_CAP_END_RETURNED && !(why == KJIT_CAP_END_SLEPT && inv.sleeps)) {
        printf("invocation skipped: end reason %u\n", why);
        continue;
      }
    }
    k++;
    if (a->count == 1 || a->first_complete) snprintf(path, sizeof path, "%s", a->out);
    else snprintf(path, sizeof path, "%s.%u", a->out, k);
    snprintf(nm, sizeof nm, "%s#%u", name, k);
    if (capf_write(path, nm, inv.begin, inv.end, codes, ncodes, r->flags, name, 1)) rc = 1;
    if (k == a->count || a->first_complete) break;
  }
  *written = k;
  return rc;
}

static int capture_syscall(const struct capture_args *a)
{
  if ((!a->sys == !a->func) || !a->out || a->count < 1) {
    fprintf(stderr, "usage: kjitctl capture --syscall NAME|--func FUNC [--pid P] [--count N] [--timeout S] [--buf-kb KB] -o FILE [-- CMD...]\n");
    return 2;
  }
  char name[KJIT_NAME_MAX];
  if (a->sys) snprintf(name, sizeof name, "%s%s", strncmp(a->sys, "__", 2) ? "__x64_sys_" : "", a->sys);
  else snprintf(name, sizeof name, "%s", a->func);

  int go_w = -1;
  pid_t child = 0;
  unsigned pid = a->pid;
  if (a->cmdv && *a->cmdv) {
    child = spawn_held(a->cmdv, &go_w, 0);
    if (child < 0) return 1;
    pid = child;
  }
  struct kjit_ioc_capture_read r;
  unsigned char *evb, *cob;
  if (capture_call(a, name, pid, child, go_w, &r, &evb, &cob)) return 1;

  size_t ncodes;
  struct capf_code *codes = capf_codes(cob, r.code_bytes, &ncodes);
  unsigned k;
  int rc = write_invocations(a, name, &r, evb, codes, ncodes, &k);
  printf("capture %s: %u invocation(s) written, events %llu bytes, code %llu bytes (%zu blocks)%s\n", name, k,
         (unsigned long long)r.event_bytes, (unsigned long long)r.code_bytes, ncodes,
         (r.flags & KJIT_CAP_F_OVERFLOW) ? ", OVERFLOW" : "");
  free(evb); free(cob); free(codes);
  if (k == 0) { fprintf(stderr, "kjitctl capture: no invocation of %s was recorded\n", name); return 1; }
  return rc;
}

int cmd_capture(int argc, char **argv)
{
  struct capture_args a;
  int all = wants_all_syscalls(argc, argv);
  int rc = parse_capture_args(argc, argv, all, &a);
  if (rc) return rc;
  return all ? capture_all_syscalls(&a) : capture_syscall(&a);
}
