// SPDX-License-Identifier: GPL-2.0
/* kjitctl record: one measurement in one command, like `perf record`.
 *
 *   kjitctl record [-t TOOL] [-e TARGETS] [-o FILE] [-d SECS] [FILTERS]
 *                  (-c 'CMD ARGS' | -p PID | -a | --tid TID | -- CMD ARGS...)
 *
 * Configures TOOL (bbcount by default) with a pid filter on the workload
 * and its descendants (none with -a: every task), and the filters by task
 * (task_filters.c: --tid, --comm, --cgroup, --cpu; all must match),
 * attaches TARGETS (comma-separated system calls, functions and globs;
 * targets.c), runs the workload (held on a pipe until everything is armed:
 * spawn_held) or follows PID, stops when the workload exits (with -a and no
 * command, when the --tid thread exits, or on Ctrl-C, SIGTERM, or after
 * SECS, as `perf record -a`), detaches, and writes FILE
 * (kjit.data, record_file.c).  The device file is a session
 * (KJIT_IOC_SESSION): if kjitctl dies, the module detaches.  Exit status:
 * the workload's (128 + signal when it was killed), or 1-3 when kjitctl
 * itself fails (the man page lists them). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "kjitctl.h"
#include "progress.h"

#define REC_EXIT_ERROR 1     /* kjit refused, I/O error */
#define REC_EXIT_USAGE 2     /* bad arguments or targets */

const struct option record_options[] = {
  {"tool", required_argument, NULL, 't'}, {"targets", required_argument, NULL, 'e'},
  {"output", required_argument, NULL, 'o'}, {"duration", required_argument, NULL, 'd'},
  {"command", required_argument, NULL, 'c'}, {"pid", required_argument, NULL, 'p'},
  {"help", no_argument, NULL, 'h'}, {"all-cpus", no_argument, NULL, 'a'}, {"tid", required_argument, NULL, OPT_TID},
  {"comm", required_argument, NULL, OPT_COMM}, {"cgroup", required_argument, NULL, OPT_CGROUP},
  {"cpu", required_argument, NULL, 'C'}, {NULL, 0, NULL, 0}};

struct record_args {
  const char *tool, *targets, *out, *command;
  int tool_id;
  double duration;   /* seconds, 0: until the workload ends */
  pid_t follow;      /* -p */
  char **cmdv;       /* after -- */
  struct task_filters filt;
  int system_wide;   /* no pid filter: -a, or a filter without a workload */
};

static volatile sig_atomic_t rec_stop;
static void rec_on_signal(int sig) { rec_stop = sig; }

static uint64_t mono_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int record_help(FILE *to)
{
  fprintf(to,
          "usage: kjitctl record [-t TOOL] [-e TARGETS] [-o FILE] [-d SECS] [--tid TID] [--comm NAME]\n"
          "                      [--cgroup PATH] [-C LIST] (-c 'CMD ARGS' | -p PID | -a | -- CMD ARGS...)\n"
          "  -t, --tool TOOL        bbcount (default: blocks, coverage, annotate), branches (bbcount's\n"
          "                         blocks and each conditional branch's outcomes: lcov branch\n"
          "                         coverage, the branches format), callstack (graph, folded),\n"
          "                         entry_count, calltrace, icount\n"
          "  -e, --targets LIST     comma-separated system calls, functions, globs ('vfs_*');\n"
          "                         default: every system call kjit can attach\n"
          "  -o, --output FILE      default kjit.data\n"
          "  -d, --duration SECS    stop recording after SECS (the workload is sent SIGTERM)\n"
          "  -c, --command 'CMD'    run CMD with /bin/sh -c\n"
          "  -p, --pid PID          follow a running process and its children until it exits or Ctrl-C\n"
          "  -a, --all-cpus         every task (no pid filter); with no command, until Ctrl-C or -d\n"
          "      --tid TID          only thread TID; alone, until it exits (or Ctrl-C, -d)\n"
          "      --comm NAME        only tasks named NAME (its first 15 bytes, as the kernel keeps it)\n"
          "      --cgroup PATH      only tasks in cgroup v2 PATH (under /sys/fs/cgroup) or below it\n"
          "  -C, --cpu LIST         only while running on these CPUs (0,2-3)\n"
          "Only the workload and its descendants are instrumented (every task with -a, or when a\n"
          "filter is given without a workload).  Filters combine: all must match.  They are\n"
          "evaluated when a task is switched in: a task that execs to another name or moves to\n"
          "another cgroup while running is re-evaluated at its next switch-in; interrupts are not\n"
          "recorded while one is given.  On a terminal, stderr shows a progress line while the\n"
          "workload runs (erased at the end).  Exit status: the workload's (128+N when killed by\n"
          "signal N); 1 kjit error, 2 usage or target error.\n");
  return to == stdout ? 0 : REC_EXIT_USAGE;
}


/* -1 when the arguments name one workload and a tool that records
 * something, else the exit status (after the usage or a message). */
static int parse_record_args(int argc, char **argv, struct record_args *a)
{
  int c;
  *a = (struct record_args){.tool = "bbcount", .out = "kjit.data"};
  optind = 1;
  while ((c = getopt_long(argc, argv, "+t:e:o:d:c:p:haC:", record_options, NULL)) != -1) {
    char *end;
    int f = task_filters_option(c, optarg, &a->filt);
    if (f < 0) return REC_EXIT_USAGE;
    if (f) continue;
    switch (c) {
      case 't': a->tool = optarg; break;
      case 'e': a->targets = optarg; break;
      case 'o': a->out = optarg; break;
      case 'c': a->command = optarg; break;
      case 'd':
        a->duration = strtod(optarg, &end);
        if (*end || a->duration <= 0) { fprintf(stderr, "kjitctl record: bad duration %s\n", optarg); return REC_EXIT_USAGE; }
        break;
      case 'p':
        a->follow = (pid_t)strtol(optarg, &end, 10);
        if (*end || a->follow <= 0) { fprintf(stderr, "kjitctl record: bad pid %s\n", optarg); return REC_EXIT_USAGE; }
        break;
      case 'h': return record_help(stdout);
      default: return record_help(stderr);
    }
  }
  a->cmdv = optind < argc ? argv + optind : NULL;
  /* perf's rules: -a records every task, while CMD runs or until Ctrl-C;
   * a filter without a workload implies -a. */
  int workloads = !!a->command + !!a->follow + !!a->cmdv;
  if (workloads > 1 || (a->filt.all && a->follow) ||
      (!workloads && !a->filt.all && !task_filters_narrow(&a->filt))) {
    fprintf(stderr, "kjitctl record: give one workload: -c 'CMD', -p PID, -- CMD ARGS, or -a (every task)\n");
    return record_help(stderr);
  }
  if (a->filt.tid && workloads && !a->follow && !a->filt.all) {
    fprintf(stderr, "kjitctl record: --tid with a command needs -a (the thread is not the command's)\n");
    return REC_EXIT_USAGE;
  }
  a->system_wide = a->filt.all || !workloads;
  int t = tool_by_name(a->tool);
  if (t < 0 || t > KJIT_TOOL_MAX || t == KJIT_TOOL_NONE || t == KJIT_TOOL_BRANCH_HINTS ||
      t == KJIT_TOOL_LOCK_CONTENTION) {
    fprintf(stderr, "kjitctl record: tool %s records nothing a report reads; use bbcount, branches,"
                    " callstack, entry_count, calltrace or icount\n", a->tool);
    return REC_EXIT_USAGE;
  }
  a->tool_id = t;
  if (a->follow && kill(a->follow, 0) && errno == ESRCH) {
    fprintf(stderr, "kjitctl record: no process %d\n", (int)a->follow);
    return REC_EXIT_USAGE;
  }
  return -1;
}

/* The functions -e names, or every system call; every one must expand (a
 * typo is not silently dropped).  0, or 1 after a message. */
static int expand_targets(const char *targets, struct names *want)
{
  if (!targets) {
    expand_target("__x64_sys_*", want);
    return !want->n;
  }
  char *list = strdup(targets), *save = NULL;
  int bad = 0;
  for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    bad |= expand_target(tok, want);
  free(list);
  return bad;
}

/* The tool, with a pid filter on the workload and its descendants (wpid
 * 0: none) and the filters by task; 0, or -1 after a message. */
static int configure(const struct record_args *a, pid_t wpid)
{
  struct kjit_ioc_config cf = {.size = sizeof cf, .tool = (uint32_t)a->tool_id, .inline_instrumentation = 1,
                               .use_liveness = 1, .pid = (uint32_t)wpid,
                               .flags = wpid ? KJIT_CONFIG_PID_DESCENDANTS : 0, .cgroup_fd = -1};
  if (task_filters_apply(&a->filt, &cf)) return -1;
  uint64_t config_start = mono_ns();
  int rc = ioctl(kjit_fd, KJIT_IOC_CONFIG, &cf), err = errno;
  if (cf.cgroup_fd >= 0) close(cf.cgroup_fd);   /* the module holds the cgroup */
  if (rc < 0) {
    fprintf(stderr, "kjitctl record: configure %s: %s%s\n", a->tool, strerror(err),
            err == EBUSY ? " (something is attached or a capture runs: `kjitctl list`,"
                           " `kjitctl detach all`)" :
            err == EINVAL && task_filters_narrow(&a->filt) && a->tool_id == KJIT_TOOL_KCOV
                ? " (kcov admits the tasks that enabled coverage: no other filter)" : "");
    return -1;
  }
  /* The module proves the code cache unused before it re-creates the
   * engine, after an RCU-tasks grace period: a task that never sleeps
   * (a loop of system calls) holds that up, and a followed process may
   * have done much of its work meanwhile. */
  if (mono_ns() - config_start > 2000000000ull)
    fprintf(stderr, "kjitctl record: configuring took %.1f s: kjit waited for every task to leave its code cache"
                    " (an RCU-tasks grace period, held up by tasks that do not sleep)\n",
            (double)(mono_ns() - config_start) / 1e9);
  return 0;
}

/* Attaches `want` in one ftrace update: the attached ones go to `got`,
 * kjit's answer for each to `verdicts` (the TARGETS section).  Refusals
 * are reported, not fatal, unless nothing is left.  0, or -1 after a
 * message. */
static int attach_targets(const struct record_args *a, const struct names *want, struct names *got,
                          struct buf *verdicts, const char *who)
{
  char *buf = calloc(want->n, KJIT_NAME_MAX);
  int32_t *res = calloc(want->n, sizeof *res);
  if (!buf || !res) { fprintf(stderr, "kjitctl: out of memory\n"); return -1; }
  for (size_t i = 0; i < want->n; i++) snprintf(buf + i * KJIT_NAME_MAX, KJIT_NAME_MAX, "%s", want->v[i]);
  struct kjit_ioc_attach_many m = {sizeof m, (uint32_t)want->n, (uint64_t)(uintptr_t)buf,
                                   (uint64_t)(uintptr_t)res};
  if (ioctl(kjit_fd, KJIT_IOC_ATTACH_MANY, &m) < 0) {
    fprintf(stderr, "kjitctl record: attach: %s\n", strerror(errno));
    return -1;
  }
  size_t refused = 0;
  for (size_t i = 0; i < want->n; i++) {
    char line[512];
    if (!res[i]) names_add(got, want->v[i]);
    else refused++;
    snprintf(line, sizeof line, "%s %s\n", want->v[i], res[i] ? refusal(-res[i]) : "attached");
    buf_put(verdicts, line, strlen(line));
    /* A list the user wrote is reported name by name; a default or glob
     * expansion only in the count. */
    if (res[i] && a->targets && !is_glob(a->targets))
      fprintf(stderr, "kjitctl record: %s refused: %s\n", want->v[i], refusal(-res[i]));
  }
  free(buf);
  free(res);
  if (!got->n) {
    ioctl(kjit_fd, KJIT_IOC_DETACH, &(struct kjit_ioc_target){.size = sizeof(struct kjit_ioc_target), .name = "*"});
    fprintf(stderr, "kjitctl record: kjit refused every target (`kjitctl list GLOB` says why)\n");
    return -1;
  }
  fprintf(stderr, "kjitctl record: %s on %zu function%s (%zu refused), %s\n",
          a->tool, got->n, got->n == 1 ? "" : "s", refused, who);
  return 0;
}

/* The workload's command line as one string (META's command). */
static char *joined(char **cmdv)
{
  size_t len = 1;
  for (char **a = cmdv; *a; a++) len += strlen(*a) + 1;
  char *s = calloc(len, 1);
  for (char **a = cmdv; *a; a++) { strcat(s, *a); if (a[1]) strcat(s, " "); }
  return s;
}

/* Whether thread or process `id` still exists (/proc/ID names threads
 * too). */
static int task_exists(pid_t id)
{
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/status", (int)id);
  return !access(p, F_OK);
}

/* Lets the held child go (or follows a->follow, or the --tid thread, or
 * nothing with -a) until it ends, or a signal (Ctrl-C, SIGTERM, the end of
 * --duration) stops the recording; the signal that stopped it, or 0. */
static int run_workload(const struct record_args *a, pid_t child, int go_w, struct record_info *info)
{
  struct sigaction sa = {0};
  sa.sa_handler = rec_on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);
  if (a->duration > 0) {
    struct itimerval it = {{0, 0}, {(time_t)a->duration, (suseconds_t)((a->duration - (time_t)a->duration) * 1e6)}};
    setitimer(ITIMER_REAL, &it, NULL);
  }
  info->t0 = mono_ns();
  if (a->cmdv) info->command = joined(a->cmdv);
  if (child) release_held(go_w);
  int stopped_by = 0;
  progress_begin("kjitctl record");
  for (;;) {
    if (child) {
      pid_t w = waitpid_progress(child, &info->status);
      if (w == child) { info->status_known = 1; break; }
      if (w < 0 && errno != EINTR) break;
    } else if (a->follow) {
      if (kill(a->follow, 0) && errno == ESRCH) break;
      progress_entries("following the process");
      usleep(20000);
    } else {
      if (a->filt.tid && !task_exists(a->filt.tid)) break;
      usleep(20000);
    }
    if (rec_stop && !stopped_by) {
      stopped_by = rec_stop;
      /* Ctrl-C reaches the workload through the terminal; the end of
       * --duration or a SIGTERM to kjitctl is passed on to its own child. */
      if (child && stopped_by != SIGINT) kill(child, SIGTERM);
      if (!child) break;
    }
  }
  /* Ctrl-C reaches the workload too: when the workload ends of it before kjitctl's
   * wait sees the signal, the recording was still stopped by it. */
  if (rec_stop && !stopped_by) stopped_by = rec_stop;
  info->t1 = mono_ns();
  progress_end();
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  return stopped_by;
}

/* Detaches, reads the results and writes the file; the exit status. */
static int finish(const struct record_args *a, const struct record_info *info, int stopped_by)
{
  /* Detach first: the results are then those of the workload only, and
   * stay until the next configuration. */
  struct kjit_ioc_target all = {.size = sizeof all, .name = "*"};
  if (ioctl(kjit_fd, KJIT_IOC_DETACH, &all) < 0) perror("kjitctl record: detach");
  struct kjit_ioc_results r;
  struct kjit_ioc_rec *recs = get_results(&r);
  struct kjit_ioc_stats st;
  if (get_stats(&st) < 0) { perror("kjitctl record: stats"); return REC_EXIT_ERROR; }
  if (record_write(a->out, info, &r, recs, &st)) {
    fprintf(stderr, "kjitctl record: writing %s: %s\n", a->out, strerror(errno));
    return REC_EXIT_ERROR;
  }
  print_completion(stderr, &st);
  fprintf(stderr, "kjitctl record: wrote %s: tool %s, %llu records%s\n", a->out, a->tool,
          (unsigned long long)r.nrec,
          stopped_by == SIGALRM ? ", stopped after --duration" : stopped_by ? ", stopped by a signal" : "");
  /* Counts that are not in the file are said so (bbcount's and branches'
   * tables are sized by the module's bb_max and br_max parameters). */
  if ((r.tool == KJIT_TOOL_BBCOUNT || r.tool == KJIT_TOOL_BRANCHES) && r.scalars[1])
    fprintf(stderr, "kjitctl record: %llu block translations found the block table full (kjit.ko bb_max):"
                    " their counts are in the total only\n", (unsigned long long)r.scalars[1]);
  if (r.tool == KJIT_TOOL_BRANCHES && r.scalars[3])
    fprintf(stderr, "kjitctl record: %llu branch translations found the branch table full (kjit.ko br_max):"
                    " those branches are not counted\n", (unsigned long long)r.scalars[3]);
  if (!info->status_known) return 0;
  if (WIFEXITED(info->status)) return WEXITSTATUS(info->status);
  return 128 + WTERMSIG(info->status);
}

int cmd_record(int argc, char **argv)
{
  struct record_args a;
  int rc = parse_record_args(argc, argv, &a);
  if (rc >= 0) return rc;
  if (open_dev()) return REC_EXIT_ERROR;
  struct names want = {0};
  if (expand_targets(a.targets, &want)) return REC_EXIT_USAGE;

  if (ioctl(kjit_fd, KJIT_IOC_SESSION, 0) < 0) { perror("kjitctl record: session"); return REC_EXIT_ERROR; }
  pid_t child = 0;
  int go_w = -1;
  char *shv[] = {"/bin/sh", "-c", (char *)a.command, NULL};
  if (a.command || a.cmdv) {
    child = spawn_held(a.command ? shv : a.cmdv, &go_w, 0);
    if (child < 0) return REC_EXIT_ERROR;
  }
  pid_t wpid = a.system_wide ? 0 : child ? child : a.follow;
  char who[512];
  task_filters_describe(&a.filt, wpid, who, sizeof who);
  struct names got = {0};
  struct buf verdicts = {0};
  if (configure(&a, wpid) || attach_targets(&a, &want, &got, &verdicts, who)) {
    /* a failure must not leave the held child behind */
    if (child) { kill(child, SIGKILL); waitpid(child, NULL, 0); }
    return REC_EXIT_ERROR;
  }
  struct record_info info = {a.tool, a.command, who, &got, &verdicts, wpid, 0, 0, 0, 0};
  int stopped_by = run_workload(&a, child, go_w, &info);
  return finish(&a, &info, stopped_by);
}
