// SPDX-License-Identifier: GPL-2.0
/* kjitctl top: live per-function (or per-block) rates, like `perf top`
 * and bpftrace's interval probes.
 *
 *   kjitctl top [-e TARGETS] [-i SECS] [-n COUNT] [-l LINES] [--blocks]
 *               [-p PID | -a] [--tid TID] [--comm NAME] [--cgroup PATH] [-C LIST]
 *
 * Configures entry_count (calls of every function the attached targets
 * run: per-function rates) or, with --blocks, bbcount (per-block rates),
 * with the same task filters as `record` (every task by default), attaches
 * TARGETS (every system call by default), and every SECS prints the
 * functions whose count grew, highest rate first.  Ctrl-C (or SIGTERM,
 * COUNT intervals, the end of the followed process) ends it: everything is
 * detached before it exits, and the device file is a session
 * (KJIT_IOC_SESSION), so a kjitctl that dies detaches too. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "kjitctl.h"

#define TOP_EXIT_ERROR 1
#define TOP_EXIT_USAGE 2
enum { OPT_BLOCKS = 256 };

const struct option top_options[] = {
  {"targets", required_argument, NULL, 'e'}, {"interval", required_argument, NULL, 'i'},
  {"iterations", required_argument, NULL, 'n'}, {"lines", required_argument, NULL, 'l'},
  {"blocks", no_argument, NULL, OPT_BLOCKS}, {"pid", required_argument, NULL, 'p'},
  {"help", no_argument, NULL, 'h'}, {"all-cpus", no_argument, NULL, 'a'}, {"tid", required_argument, NULL, OPT_TID},
  {"comm", required_argument, NULL, OPT_COMM}, {"cgroup", required_argument, NULL, OPT_CGROUP},
  {"cpu", required_argument, NULL, 'C'}, {NULL, 0, NULL, 0}};

struct top_args {
  const char *targets;
  double interval;
  long iterations, lines;   /* 0: until Ctrl-C */
  int blocks;
  pid_t follow;
  struct task_filters filt;
};

static volatile sig_atomic_t top_stop;
static void top_on_signal(int sig) { top_stop = sig; }

int top_help(FILE *to)
{
  fprintf(to,
          "usage: kjitctl top [-e TARGETS] [-i SECS] [-n COUNT] [-l LINES] [--blocks] [-p PID | -a]\n"
          "                   [--tid TID] [--comm NAME] [--cgroup PATH] [-C LIST]\n"
          "  -e, --targets LIST     as record's (default: every system call kjit can attach)\n"
          "  -i, --interval SECS    refresh every SECS (default 1)\n"
          "  -n, --iterations N     stop after N intervals (default: Ctrl-C)\n"
          "  -l, --lines N          the N highest rates (default 20)\n"
          "      --blocks           per block (bbcount) instead of per function (entry_count)\n"
          "  -p, --pid PID          only PID and its children, until it exits\n"
          "  -a, --all-cpus         every task (the default)\n"
          "  --tid, --comm, --cgroup, -C/--cpu: record's filters (all must match)\n"
          "Each interval prints its calls per second, then one line per function that ran in it:\n"
          "calls/s, calls in the interval, total calls, name.  Ctrl-C detaches everything.\n");
  return to == stdout ? 0 : TOP_EXIT_USAGE;
}

static int parse_top_args(int argc, char **argv, struct top_args *a)
{
  int c;
  *a = (struct top_args){.interval = 1, .lines = 20};
  optind = 1;
  while ((c = getopt_long(argc, argv, "+e:i:n:l:p:haC:", top_options, NULL)) != -1) {
    char *end = NULL;
    int f = task_filters_option(c, optarg, &a->filt);
    if (f < 0) return TOP_EXIT_USAGE;
    if (f) continue;
    switch (c) {
      case 'e': a->targets = optarg; break;
      case 'i': a->interval = strtod(optarg, &end); if (*end || a->interval < 0.1) goto bad; break;
      case 'n': a->iterations = strtol(optarg, &end, 10); if (*end || a->iterations <= 0) goto bad; break;
      case 'l': a->lines = strtol(optarg, &end, 10); if (*end || a->lines <= 0) goto bad; break;
      case 'p': a->follow = (pid_t)strtol(optarg, &end, 10); if (*end || a->follow <= 0) goto bad; break;
      case OPT_BLOCKS: a->blocks = 1; break;
      case 'h': return top_help(stdout);
      default: return top_help(stderr);
    }
    continue;
  bad:
    fprintf(stderr, "kjitctl top: bad value %s for -%c (interval >= 0.1 s; counts > 0)\n", optarg, c);
    return TOP_EXIT_USAGE;
  }
  if (optind < argc) {
    fprintf(stderr, "kjitctl top: unexpected argument %s\n", argv[optind]);
    return top_help(stderr);
  }
  if (a->follow && a->filt.all) {
    fprintf(stderr, "kjitctl top: -a records every task; -p PID follows one\n");
    return TOP_EXIT_USAGE;
  }
  if (a->follow && kill(a->follow, 0) && errno == ESRCH) {
    fprintf(stderr, "kjitctl top: no process %d\n", (int)a->follow);
    return TOP_EXIT_USAGE;
  }
  return -1;
}

static int configure_and_attach(const struct top_args *a, const struct names *want)
{
  struct kjit_ioc_config cf = {.size = sizeof cf, .inline_instrumentation = 1, .use_liveness = 1,
                               .tool = a->blocks ? KJIT_TOOL_BBCOUNT : KJIT_TOOL_ENTRY_COUNT,
                               .pid = (uint32_t)a->follow,
                               .flags = a->follow ? KJIT_CONFIG_PID_DESCENDANTS : 0, .cgroup_fd = -1};
  if (task_filters_apply(&a->filt, &cf)) return -1;
  int rc = ioctl(kjit_fd, KJIT_IOC_CONFIG, &cf), err = errno;
  if (cf.cgroup_fd >= 0) close(cf.cgroup_fd);
  if (rc < 0) {
    fprintf(stderr, "kjitctl top: configure: %s%s\n", strerror(err),
            err == EBUSY ? " (something is attached or a capture runs: `kjitctl list`, `kjitctl detach all`)" : "");
    return -1;
  }
  char *buf = calloc(want->n, KJIT_NAME_MAX);
  int32_t *res = calloc(want->n, sizeof *res);
  if (!buf || !res) { fprintf(stderr, "kjitctl: out of memory\n"); return -1; }
  for (size_t i = 0; i < want->n; i++) snprintf(buf + i * KJIT_NAME_MAX, KJIT_NAME_MAX, "%s", want->v[i]);
  struct kjit_ioc_attach_many m = {sizeof m, (uint32_t)want->n, (uint64_t)(uintptr_t)buf, (uint64_t)(uintptr_t)res};
  int n = ioctl(kjit_fd, KJIT_IOC_ATTACH_MANY, &m);
  free(buf);
  free(res);
  if (n <= 0) {
    fprintf(stderr, "kjitctl top: attach: %s\n", n < 0 ? strerror(errno) : "kjit refused every target");
    return -1;
  }
  char who[512];
  task_filters_describe(&a->filt, a->follow, who, sizeof who);
  fprintf(stderr, "kjitctl top: %s on %d function%s, %s; Ctrl-C ends\n", a->blocks ? "blocks" : "calls", n,
          n == 1 ? "" : "s", who);
  return 0;
}

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A function's (or block's) count now and in the interval. */
struct rate { unsigned long long pc, total, delta; };
static int by_delta(const void *x, const void *y)
{
  const struct rate *a = x, *b = y;
  if (a->delta != b->delta) return a->delta < b->delta ? 1 : -1;
  return a->pc < b->pc ? -1 : a->pc > b->pc;
}

/* The counts now (sorted by pc) minus `prev` (sorted by pc): the rows that
 * grew, highest first; *nrows of them. */
static struct rate *interval_rates(const struct pcnt *now, size_t n, const struct pcnt *prev, size_t np,
                                   size_t *nrows, unsigned long long *sum)
{
  struct rate *r = calloc(n + 1, sizeof *r);
  size_t j = 0, k = 0;
  *sum = 0;
  for (size_t i = 0; i < n; i++) {
    while (j < np && prev[j].pc < now[i].pc) j++;
    unsigned long long before = j < np && prev[j].pc == now[i].pc ? prev[j].count : 0;
    if (now[i].count <= before) continue;
    r[k++] = (struct rate){now[i].pc, now[i].count, now[i].count - before};
    *sum += now[i].count - before;
  }
  qsort(r, k, sizeof *r, by_delta);
  *nrows = k;
  return r;
}

static void print_interval(const struct top_args *a, long iter, double secs, const struct rate *r, size_t n,
                           unsigned long long sum)
{
  char b[512];
  if (isatty(STDOUT_FILENO)) printf("\033[H\033[2J");
  printf("kjitctl top: interval %ld, %.2f s, %.0f %s/s, %zu %s\n", iter, secs, (double)sum / secs,
         a->blocks ? "blocks" : "calls", n, a->blocks ? "blocks ran" : "functions called");
  printf("%12s %12s %14s  %s\n", a->blocks ? "blocks/s" : "calls/s", "interval", "total",
         a->blocks ? "block" : "function");
  for (size_t i = 0; i < n && (long)i < a->lines; i++)
    printf("%12.0f %12llu %14llu  %s\n", (double)r[i].delta / secs, r[i].delta, r[i].total,
           symbolize(r[i].pc, b, sizeof b));
  printf("\n");
  fflush(stdout);
}

/* Sleeps SECS unless a signal comes first. */
static void wait_interval(double secs)
{
  struct timespec t = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
  while (!top_stop && nanosleep(&t, &t) && errno == EINTR) {}
}

int cmd_top(int argc, char **argv)
{
  struct top_args a;
  int rc = parse_top_args(argc, argv, &a);
  if (rc >= 0) return rc;
  if (open_dev()) return TOP_EXIT_ERROR;
  struct names want = {0};
  if (!a.targets) {
    expand_target("__x64_sys_*", &want);
    if (!want.n) return TOP_EXIT_USAGE;
  } else {
    char *list = strdup(a.targets), *save = NULL;
    int bad = 0;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) bad |= expand_target(tok, &want);
    free(list);
    if (bad) return TOP_EXIT_USAGE;
  }
  if (ioctl(kjit_fd, KJIT_IOC_SESSION, 0) < 0) { perror("kjitctl top: session"); return TOP_EXIT_ERROR; }
  struct sigaction sa = {0};
  sa.sa_handler = top_on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (configure_and_attach(&a, &want)) return TOP_EXIT_ERROR;
  load_syms();
  struct pcnt *prev = NULL;
  size_t nprev = 0;
  double t_prev = now_s();
  int status = 0;
  for (long iter = 1; !top_stop; iter++) {
    wait_interval(a.interval);
    if (top_stop) break;
    struct kjit_ioc_results r;
    struct kjit_ioc_rec *recs = get_results(&r);
    struct pcnt *now = calloc(r.nrec + 1, sizeof *now);
    size_t n = aggregate(recs, r.nrec, now), nrows;
    double t = now_s();
    unsigned long long sum;
    struct rate *rows = interval_rates(now, n, prev, nprev, &nrows, &sum);
    print_interval(&a, iter, t - t_prev, rows, nrows, sum);
    free(rows);
    free(prev);
    prev = now;
    nprev = n;
    t_prev = t;
    if (a.iterations && iter >= a.iterations) break;
    if (a.follow && kill(a.follow, 0) && errno == ESRCH) break;
  }
  free(prev);
  struct kjit_ioc_target all = {.size = sizeof all, .name = "*"};
  if (ioctl(kjit_fd, KJIT_IOC_DETACH, &all) < 0) { perror("kjitctl top: detach"); status = TOP_EXIT_ERROR; }
  else fprintf(stderr, "kjitctl top: detached%s\n", top_stop ? " (signal)" : "");
  return status;
}
