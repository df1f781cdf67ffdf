/* kjitctl record: one measurement in one command, like `perf record`.
 *
 *   kjitctl record [-t TOOL] [-e TARGETS] [-o FILE] [-d SECS]
 *                  (-c 'CMD ARGS' | -p PID | -- CMD ARGS...)
 *
 * Configures TOOL (bbcount by default) with a pid filter on the workload
 * and its descendants, attaches TARGETS (comma-separated system calls,
 * functions and globs; kjitctl_targets.h), runs the workload (held on a
 * pipe until everything is armed: capf_spawn_held) or follows PID, stops
 * when the workload exits (or on Ctrl-C, SIGTERM, or after SECS), detaches,
 * and writes FILE (kjit.data, include/uapi/kjit/data_format.h).  The device file
 * is a session (KJIT_IOC_SESSION): if kjitctl dies, the module detaches.
 * Exit status: the workload's (128 + signal when it was killed), or 1-3
 * when kjitctl itself fails (the man page lists them).  Included by kjitctl.c. */
#include <getopt.h>
#include <sys/utsname.h>
#include "uapi/kjit/data_format.h"

#define REC_EXIT_ERROR 1     /* kjit refused, I/O error */
#define REC_EXIT_USAGE 2     /* bad arguments or targets */

static volatile sig_atomic_t rec_stop;
static void rec_on_signal(int sig) { rec_stop = sig; }

static uint64_t mono_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The running kernel's GNU build id from /sys/kernel/notes (ELF notes), as
 * hex; "" when there is none. */
static void kernel_build_id(char *hex, size_t len)
{
  unsigned char buf[4096];
  hex[0] = 0;
  int f = open("/sys/kernel/notes", O_RDONLY);
  if (f < 0) return;
  ssize_t n = read(f, buf, sizeof buf);
  close(f);
  for (ssize_t off = 0; n > 0 && off + 12 <= n;) {
    uint32_t namesz, descsz, type;
    memcpy(&namesz, buf + off, 4); memcpy(&descsz, buf + off + 4, 4); memcpy(&type, buf + off + 8, 4);
    size_t name_off = off + 12, desc_off = name_off + ((namesz + 3) & ~3u);
    if (namesz > 256 || descsz > 1024 || desc_off + descsz > (size_t)n) return;
    if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
      for (uint32_t i = 0; i < descsz && 2 * i + 3 <= len; i++) sprintf(hex + 2 * i, "%02x", buf[desc_off + i]);
      return;
    }
    off = desc_off + ((descsz + 3) & ~3u);
  }
}

static unsigned long long ksym_addr(const char *name)
{
  load_syms();
  for (size_t i = 0; i < nsyms; i++)
    if (!strcmp(syms[i].name, name)) return syms[i].addr;
  return 0;
}

/* Index of the text symbol holding `a`, or -1. */
static long sym_index(unsigned long long a)
{
  size_t lo = 0, hi = nsyms;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (syms[mid].addr <= a) lo = mid + 1; else hi = mid;
  }
  return lo ? (long)lo - 1 : -1;
}

struct rec_out { struct capf_buf file; uint32_t nsections; };

static void rec_section(struct rec_out *o, uint32_t type, const struct capf_buf *pl)
{
  static const unsigned char zeros[8];
  capf_u32(&o->file, type);
  capf_u32(&o->file, kjit_capf_section_crc(type, pl->p, pl->n));
  capf_u64(&o->file, pl->n);
  if (pl->n) capf_put(&o->file, pl->p, pl->n);
  if (pl->n % 8) capf_put(&o->file, zeros, 8 - pl->n % 8);
  o->nsections++;
}

static void kv(struct capf_buf *b, const char *k, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void kv(struct capf_buf *b, const char *k, const char *fmt, ...)
{
  char v[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v, sizeof v, fmt, ap);
  va_end(ap);
  for (char *p = v; *p; p++) if (*p == '\n') *p = ' ';   /* one line per key */
  capf_put(b, k, strlen(k));
  capf_put(b, "=", 1);
  capf_put(b, v, strlen(v));
  capf_put(b, "\n", 1);
}

struct rec_info {
  const char *tool, *command;
  const struct names *targets;      /* attached */
  const struct capf_buf *verdicts;  /* TARGETS section text */
  pid_t pid;
  int status_known, status;         /* wait status */
  uint64_t t0, t1;
};

/* Marks the symbols holding `a` (for the SYMBOLS section). */
static void want_sym(unsigned char *want, unsigned long long a)
{
  long i = sym_index(a);
  if (i >= 0 && a - syms[i].addr < 0x100000) want[i] = 1;
}

static int rec_write(const char *path, const struct rec_info *in, const struct kjit_ioc_results *r,
                     const struct kjit_ioc_rec *recs, const struct kjit_ioc_stats *st)
{
  struct rec_out o = {{0}, 0};
  struct capf_buf b = {0};
  struct utsname u;
  char bid[129];
  uint64_t n = r->nrec;
  static const unsigned char zeros[8];

  load_syms();
  uname(&u);
  kernel_build_id(bid, sizeof bid);
  kv(&b, "kjit_version", "%s", KJIT_VERSION);
  kv(&b, "kernel_release", "%s", u.release);
  kv(&b, "build_id", "%s", bid);
  kv(&b, "stext", "0x%llx", ksym_addr("_stext"));
  kv(&b, "tool", "%s", in->tool);
  {
    struct capf_buf t = {0};
    for (size_t i = 0; i < in->targets->n; i++) {
      if (i) capf_put(&t, " ", 1);
      capf_put(&t, in->targets->v[i], strlen(in->targets->v[i]));
    }
    capf_put(&t, "", 1);
    kv(&b, "targets", "%s", t.p);
    free(t.p);
  }
  kv(&b, "command", "%s", in->command ? in->command : "");
  kv(&b, "pid", "%d", (int)in->pid);
  if (in->status_known && WIFEXITED(in->status)) kv(&b, "exit_status", "%d", WEXITSTATUS(in->status));
  if (in->status_known && WIFSIGNALED(in->status)) kv(&b, "exit_signal", "%d", WTERMSIG(in->status));
  kv(&b, "start_ns", "%llu", (unsigned long long)in->t0);
  kv(&b, "duration_ns", "%llu", (unsigned long long)(in->t1 - in->t0));
  kv(&b, "nodename", "%s", u.nodename);
  rec_section(&o, KJIT_DATA_META, &b);
  b.n = 0;

  kv(&b, "entered", "%llu", (unsigned long long)st->entered);
  kv(&b, "completed", "%llu", (unsigned long long)st->completed);
  kv(&b, "task_exits", "%llu", (unsigned long long)st->task_exits);
  kv(&b, "left_native_call", "%llu", (unsigned long long)st->left_native_call);
  kv(&b, "left_native_insn", "%llu", (unsigned long long)st->left_native_insn);
  kv(&b, "left_declined", "%llu", (unsigned long long)st->left_declined);
  kv(&b, "left_cache_full", "%llu", (unsigned long long)st->left_cache_full);
  kv(&b, "left_hooked", "%llu", (unsigned long long)st->left_hooked);
  kv(&b, "left_sleep_not_followed", "%llu",
     (unsigned long long)(st->left_sleep_full + st->left_sleep_off + st->sleep_lost));
  kv(&b, "left_unknown", "%llu", unknown_departures(st));
  kv(&b, "asleep", "%llu", (unsigned long long)st->sleeping);
  kv(&b, "kjit_control", "%llu", (unsigned long long)st->kjit_control);
  kv(&b, "filtered", "%llu", (unsigned long long)st->filtered);
  for (int i = 0; i < 8; i++) {
    char k[16];
    snprintf(k, sizeof k, "scalar%d", i);
    kv(&b, k, "%llu", (unsigned long long)r->scalars[i]);
  }
  rec_section(&o, KJIT_DATA_STATS, &b);
  b.n = 0;

  unsigned char *want = calloc(nsyms + 1, 1);
  if (!want) return -1;
  if (r->tool == KJIT_TOOL_BBCOUNT || r->tool == KJIT_TOOL_BRANCHES) {
    for (uint64_t i = 0; i < n; i++) {
      if ((recs[i].pid_type & 0xff) == KJIT_REC_BRANCH) continue;
      struct kjit_data_block d = {recs[i].pc, recs[i].count, (uint32_t)recs[i].sp,
                                  (uint16_t)(recs[i].sp >> 32),
                                  (uint16_t)(recs[i].pid_type & KJIT_REC_BB_FRAGMENT ? KJIT_DATA_BLOCK_FRAGMENT : 0)};
      capf_put(&b, &d, sizeof d);
      want_sym(want, d.addr);
    }
    rec_section(&o, KJIT_DATA_BLOCKS, &b);
    b.n = 0;
    for (uint64_t i = 0; r->tool == KJIT_TOOL_BRANCHES && i < n; i++) {
      if ((recs[i].pid_type & 0xff) != KJIT_REC_BRANCH) continue;
      struct kjit_data_branch d = {recs[i].pc, recs[i].pc + (uint64_t)(int64_t)(int32_t)(recs[i].pid_type >> 32),
                                   recs[i].count, recs[i].sp};
      capf_put(&b, &d, sizeof d);
      want_sym(want, d.addr);
    }
    if (r->tool == KJIT_TOOL_BRANCHES) rec_section(&o, KJIT_DATA_BRANCHES, &b);
  } else if (r->tool == KJIT_TOOL_CALLSTACK) {
    for (uint64_t i = 0; i < n; i++) {
      unsigned type = recs[i].pid_type & 0xff;
      if (type < KJIT_DATA_EV_ENTRY || type > KJIT_DATA_EV_RETURN) continue;
      struct kjit_data_event e = {recs[i].pc, recs[i].sp, recs[i].count,
                                  (uint32_t)(recs[i].pid_type >> 8), (uint16_t)(recs[i].pid_type >> 40),
                                  (uint8_t)type, 0};
      capf_put(&b, &e, sizeof e);
      want_sym(want, e.pc);
    }
    rec_section(&o, KJIT_DATA_EVENTS, &b);
  } else if (r->tool == KJIT_TOOL_ENTRY_COUNT || r->tool == KJIT_TOOL_CALLTRACE) {
    for (uint64_t i = 0; i < n; i++) {
      struct kjit_data_call c = {recs[i].pc, r->tool == KJIT_TOOL_CALLTRACE ? 1 : recs[i].count};
      capf_put(&b, &c, sizeof c);
      want_sym(want, c.addr);
    }
    rec_section(&o, KJIT_DATA_CALLS, &b);
  }
  b.n = 0;

  for (size_t i = 0; i < in->targets->n; i++) want_sym(want, ksym_addr(in->targets->v[i]));
  for (size_t i = 0; i < nsyms; i++) {
    if (!want[i]) continue;
    unsigned long long next = i + 1 < nsyms ? syms[i + 1].addr : syms[i].addr + 1;
    uint64_t size = next - syms[i].addr;
    struct kjit_data_symbol s = {syms[i].addr, size > 0xffffffffu ? 0xffffffffu : (uint32_t)size,
                                 (uint16_t)strlen(syms[i].name), 't', 0};
    capf_put(&b, &s, sizeof s);
    capf_put(&b, syms[i].name, s.name_len);
    if (s.name_len % 8) capf_put(&b, zeros, 8 - s.name_len % 8);
  }
  free(want);
  rec_section(&o, KJIT_DATA_SYMBOLS, &b);
  b.n = 0;
  rec_section(&o, KJIT_DATA_TARGETS, in->verdicts);
  free(b.p);

  struct capf_buf head = {0};
  capf_put(&head, KJIT_DATA_MAGIC, 8);
  capf_u32(&head, KJIT_DATA_VERSION);
  capf_u32(&head, o.nsections);
  capf_u64(&head, 0);
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(head.p, 1, head.n, f) == head.n && fwrite(o.file.p, 1, o.file.n, f) == o.file.n;
  if (f && fclose(f)) ok = 0;
  free(head.p);
  free(o.file.p);
  return ok ? 0 : -1;
}

static int rec_usage(FILE *to)
{
  fprintf(to,
          "usage: kjitctl record [-t TOOL] [-e TARGETS] [-o FILE] [-d SECS] (-c 'CMD ARGS' | -p PID | -- CMD ARGS...)\n"
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
          "Only the workload and its descendants are instrumented.  Exit status: the workload's\n"
          "(128+N when killed by signal N); 1 kjit error, 2 usage or target error.\n");
  return to == stdout ? 0 : REC_EXIT_USAGE;
}

static int cmd_record(int argc, char **argv)
{
  static const struct option lo[] = {
    {"tool", required_argument, 0, 't'}, {"targets", required_argument, 0, 'e'},
    {"output", required_argument, 0, 'o'}, {"duration", required_argument, 0, 'd'},
    {"command", required_argument, 0, 'c'}, {"pid", required_argument, 0, 'p'},
    {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  const char *tool = "bbcount", *targets = NULL, *out = "kjit.data", *command = NULL;
  double duration = 0;
  pid_t follow = 0;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+t:e:o:d:c:p:h", lo, NULL)) != -1) {
    char *end;
    switch (c) {
      case 't': tool = optarg; break;
      case 'e': targets = optarg; break;
      case 'o': out = optarg; break;
      case 'c': command = optarg; break;
      case 'd':
        duration = strtod(optarg, &end);
        if (*end || duration <= 0) { fprintf(stderr, "kjitctl record: bad duration %s\n", optarg); return REC_EXIT_USAGE; }
        break;
      case 'p':
        follow = (pid_t)strtol(optarg, &end, 10);
        if (*end || follow <= 0) { fprintf(stderr, "kjitctl record: bad pid %s\n", optarg); return REC_EXIT_USAGE; }
        break;
      case 'h': return rec_usage(stdout);
      default: return rec_usage(stderr);
    }
  }
  char **cmdv = optind < argc ? argv + optind : NULL;
  if (!!command + !!follow + !!cmdv != 1) {
    fprintf(stderr, "kjitctl record: give exactly one workload: -c 'CMD', -p PID or -- CMD ARGS\n");
    return rec_usage(stderr);
  }
  int t = tool_by_name(tool);
  if (t < 0 || t > KJIT_TOOL_MAX || t == KJIT_TOOL_NONE || t == KJIT_TOOL_BRANCH_HINTS ||
      t == KJIT_TOOL_LOCK_CONTENTION) {
    fprintf(stderr, "kjitctl record: tool %s records nothing a report reads; use bbcount, branches,"
                    " callstack, entry_count, calltrace or icount\n", tool);
    return REC_EXIT_USAGE;
  }
  if (follow && kill(follow, 0) && errno == ESRCH) {
    fprintf(stderr, "kjitctl record: no process %d\n", (int)follow);
    return REC_EXIT_USAGE;
  }

  /* Targets: every one must expand (a typo is not silently dropped). */
  struct names want = {0};
  if (targets) {
    char *list = strdup(targets), *save = NULL;
    int bad = 0;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
      bad |= expand_target(tok, &want);
    free(list);
    if (bad) return REC_EXIT_USAGE;
  } else {
    expand_target("__x64_sys_*", &want);
    if (!want.n) return REC_EXIT_USAGE;
  }

  if (ioctl(fd, KJIT_IOC_SESSION, 0) < 0) { perror("kjitctl record: session"); return REC_EXIT_ERROR; }
  pid_t child = 0;
  int go_w = -1;
  char *shv[] = {"/bin/sh", "-c", (char *)command, NULL};
  if (command || cmdv) {
    child = capf_spawn_held(command ? shv : cmdv, &go_w, 0);
    if (child < 0) return REC_EXIT_ERROR;
  }
  pid_t wpid = child ? child : follow;
  /* From here on a failure must not leave the held child behind. */
#define REC_FAIL(...) do { fprintf(stderr, __VA_ARGS__);                        \
                           if (child) { kill(child, SIGKILL); waitpid(child, NULL, 0); } \
                           return REC_EXIT_ERROR; } while (0)

  struct kjit_ioc_config cf = {.size = sizeof cf, .tool = (uint32_t)t, .inline_instrumentation = 1,
                               .use_liveness = 1, .pid = (uint32_t)wpid,
                               .flags = KJIT_CONFIG_PID_DESCENDANTS};
  uint64_t config_start = mono_ns();
  if (ioctl(fd, KJIT_IOC_CONFIG, &cf) < 0)
    REC_FAIL("kjitctl record: configure %s: %s%s\n", tool, strerror(errno),
             errno == EBUSY ? " (something is attached or a capture runs: `kjitctl list`,"
                              " `kjitctl detach all`)" : "");
  /* The module proves the code cache unused before it re-creates the
   * engine, after an RCU-tasks grace period: a task that never sleeps
   * (a loop of system calls) holds that up, and a followed process may
   * have done much of its work meanwhile. */
  if (mono_ns() - config_start > 2000000000ull)
    fprintf(stderr, "kjitctl record: configuring took %.1f s: kjit waited for every task to leave its code cache"
                    " (an RCU-tasks grace period, held up by tasks that do not sleep)\n",
            (double)(mono_ns() - config_start) / 1e9);

  /* Attach in one ftrace update; refusals are reported, not fatal, unless
   * nothing is left. */
  char *buf = calloc(want.n, KJIT_NAME_MAX);
  int32_t *res = calloc(want.n, sizeof *res);
  if (!buf || !res) REC_FAIL("kjitctl: out of memory\n");
  for (size_t i = 0; i < want.n; i++) snprintf(buf + i * KJIT_NAME_MAX, KJIT_NAME_MAX, "%s", want.v[i]);
  struct kjit_ioc_attach_many m = {sizeof m, (uint32_t)want.n, (uint64_t)(uintptr_t)buf,
                                   (uint64_t)(uintptr_t)res};
  if (ioctl(fd, KJIT_IOC_ATTACH_MANY, &m) < 0) REC_FAIL("kjitctl record: attach: %s\n", strerror(errno));
  struct names got = {0};
  struct capf_buf verdicts = {0};
  size_t refused = 0;
  for (size_t i = 0; i < want.n; i++) {
    char line[512];
    if (!res[i]) names_add(&got, want.v[i]);
    else refused++;
    snprintf(line, sizeof line, "%s %s\n", want.v[i], res[i] ? refusal(-res[i]) : "attached");
    capf_put(&verdicts, line, strlen(line));
    /* A list the user wrote is reported name by name; a default or glob
     * expansion only in the count. */
    if (res[i] && targets && !is_glob(targets))
      fprintf(stderr, "kjitctl record: %s refused: %s\n", want.v[i], refusal(-res[i]));
  }
  free(buf);
  free(res);
  if (!got.n) {
    ioctl(fd, KJIT_IOC_DETACH, &(struct kjit_ioc_target){.size = sizeof(struct kjit_ioc_target), .name = "*"});
    REC_FAIL("kjitctl record: kjit refused every target (`kjitctl list GLOB` says why)\n");
  }
  fprintf(stderr, "kjitctl record: %s on %zu function%s%s (%zu refused), pid %d and its children\n",
          tool, got.n, got.n == 1 ? "" : "s", got.n == 1 ? "" : "", refused, (int)wpid);

  struct sigaction sa = {0};
  sa.sa_handler = rec_on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);
  if (duration > 0) {
    struct itimerval it = {{0, 0}, {(time_t)duration, (suseconds_t)((duration - (time_t)duration) * 1e6)}};
    setitimer(ITIMER_REAL, &it, NULL);
  }
  struct rec_info info = {tool, command, &got, &verdicts, wpid, 0, 0, mono_ns(), 0};
  if (cmdv) {
    size_t len = 1;
    for (char **a = cmdv; *a; a++) len += strlen(*a) + 1;
    char *s = calloc(len, 1);
    for (char **a = cmdv; *a; a++) { strcat(s, *a); if (a[1]) strcat(s, " "); }
    info.command = s;
  }
  if (child) capf_release(go_w);
  int stopped_by = 0;
  for (;;) {
    if (child) {
      pid_t w = waitpid(child, &info.status, 0);
      if (w == child) { info.status_known = 1; break; }
      if (w < 0 && errno != EINTR) break;
    } else {
      if (kill(follow, 0) && errno == ESRCH) break;
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
  info.t1 = mono_ns();
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);

  /* Detach first: the results are then those of the workload only, and
   * stay until the next configuration. */
  struct kjit_ioc_target all = {.size = sizeof all, .name = "*"};
  if (ioctl(fd, KJIT_IOC_DETACH, &all) < 0) perror("kjitctl record: detach");
  struct kjit_ioc_results r;
  struct kjit_ioc_rec *recs = get_results(&r);
  struct kjit_ioc_stats st;
  if (get_stats(&st) < 0) { perror("kjitctl record: stats"); return REC_EXIT_ERROR; }
  if (rec_write(out, &info, &r, recs, &st)) {
    fprintf(stderr, "kjitctl record: writing %s: %s\n", out, strerror(errno));
    return REC_EXIT_ERROR;
  }
  print_completion(stderr, &st);
  fprintf(stderr, "kjitctl record: wrote %s: tool %s, %llu records%s\n", out, tool,
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
  if (!info.status_known) return 0;
  if (WIFEXITED(info.status)) return WEXITSTATUS(info.status);
  return 128 + WTERMSIG(info.status);
}
