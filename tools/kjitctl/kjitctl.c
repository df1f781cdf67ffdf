/* kjitctl: user-space control of kjit.ko through /dev/kjit (root only).
 *
 *   kjitctl record ...          one measurement of a workload into kjit.data
 *        (kjitctl_record.h); kjitctl report reads it (kjitctl_report_exec.h)
 *   kjitctl list [GLOB]         attached functions; with GLOB, the attachable
 *        ones it matches and why kjit refuses others (kjitctl_targets.h)
 *   kjitctl config [--tool T] [--inline 0|1] [--liveness 0|1] [--cache-kb N]
 *                  [--flush-every-entry 0|1] [--pid P] [--max-block-insns N]
 *        re-create the engine (nothing may be attached); tools: none icount
 *        bbcount calltrace branch_hints lock_contention entry_count callstack
 *   kjitctl attach TARGET...   TARGET: a system call name (openat ->
 *        __x64_sys_openat), a number (257), a kernel function name, or
 *        `all-syscalls` (every __x64_sys_* ftrace can attach; the others
 *        are reported and skipped).  Named targets go in one request: one
 *        ftrace update, and one direct ops to unregister later.
 *        `--batch N` and globs or `-f FILE` (one name a line, - = stdin):
 *        attachable functions by their own names, N per request
 *        (kjitctl_targets.h)
 *   kjitctl detach TARGET|all
 *   kjitctl stats               engine + module counters, "key value" lines
 *   kjitctl show [--json|--folded]   live results of the configured tool
 *   kjitctl blocks [--json]     per block start address: count, symbol
 *   kjitctl calls [--json]      per called function: calls, symbol
 *   kjitctl departures [--json] [--all]   where entries left the cache (reason,
 *                               count, native target); --all: completions too
 *   kjitctl flush | reset       flush the cache | zero the results
 *   kjitctl capture ...         record invocations for kjit-sim replay
 *        (kjitctl_capture.h; --all-syscalls: kjitctl_capture_all.h)
 * Symbols come from /proc/kallsyms (name+0xoff).
 * Built by CMake as a static executable (tools/kjitctl/CMakeLists.txt). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>
#include "uapi/kjit/ioctl.h"

static int fd = -1;
/* The ABI this kjitctl speaks: the header's, or another one in the build
 * that tests the mismatch message (kjitctl-other-abi, tests/guest/record.sh). */
#ifndef KJITCTL_ABI
#define KJITCTL_ABI KJIT_ABI_VERSION
#endif

static const char *tool_names[] = {"none", "icount", "bbcount", "calltrace", "branch_hints",
                                   "lock_contention", "entry_count", "callstack", "branches", "kcov"};
#define TOOL_NAME(t) ((t) < sizeof tool_names / sizeof *tool_names ? tool_names[t] : "?")

/* ---- symbols ---------------------------------------------------------- */
struct sym { unsigned long long addr; char *name; };
static struct sym *syms;
static size_t nsyms;

static int sym_cmp(const void *a, const void *b)
{
  const struct sym *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_syms(void)
{
  if (syms) return;
  FILE *f = fopen("/proc/kallsyms", "r");
  if (!f) return;
  char line[512];
  size_t cap = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long a;
    char type, name[400];
    if (sscanf(line, "%llx %c %399s", &a, &type, name) != 3) continue;
    if (type != 't' && type != 'T' && type != 'W' && type != 'w') continue;
    if (nsyms == cap) { cap = cap ? cap * 2 : 65536; syms = realloc(syms, cap * sizeof *syms); }
    syms[nsyms].addr = a;
    syms[nsyms].name = strdup(name);
    nsyms++;
  }
  fclose(f);
  qsort(syms, nsyms, sizeof *syms, sym_cmp);
}

static const char *symbolize(unsigned long long a, char *buf, size_t len)
{
  load_syms();
  size_t lo = 0, hi = nsyms;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (syms[mid].addr <= a) lo = mid + 1; else hi = mid;
  }
  if (lo == 0 || a - syms[lo - 1].addr > 0x100000) { snprintf(buf, len, "0x%llx", a); return buf; }
  unsigned long long off = a - syms[lo - 1].addr;
  if (off) snprintf(buf, len, "%s+0x%llx", syms[lo - 1].name, off);
  else snprintf(buf, len, "%s", syms[lo - 1].name);
  return buf;
}

/* ---- helpers ----------------------------------------------------------- */
/* Opens /dev/kjit and checks that the module speaks this kjitctl's ABI;
 * every failure says what to do about it. */
static int open_dev(void)
{
  fd = open("/dev/kjit", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) fprintf(stderr, "kjitctl: /dev/kjit does not exist: kjit.ko is not loaded (insmod kjit.ko)\n");
    else if (e == EACCES || e == EPERM) fprintf(stderr, "kjitctl: /dev/kjit: %s: kjitctl needs root (CAP_SYS_ADMIN)\n", strerror(e));
    else fprintf(stderr, "kjitctl: /dev/kjit: %s\n", strerror(e));
    return -1;
  }
  struct kjit_ioc_version v = {.size = sizeof v};
  int answered = ioctl(fd, KJIT_IOC_VERSION, &v) == 0, e = errno;
  if (!answered || v.abi != KJITCTL_ABI) {
    if (!answered && (e == ENOTTY || e == EINVAL))
      fprintf(stderr, "kjitctl: kjit.ko is older than kjitctl %s (ABI %u): it has no version handshake;"
                      " build both from one tree\n", KJIT_VERSION, KJITCTL_ABI);
    else if (!answered)
      fprintf(stderr, "kjitctl: /dev/kjit: version handshake: %s\n", strerror(e));
    else
      fprintf(stderr, "kjitctl: version mismatch: kjitctl %s speaks ABI %u, kjit.ko %.32s speaks ABI %u;"
                      " build both from one tree\n", KJIT_VERSION, KJITCTL_ABI, v.version, v.abi);
    close(fd);
    fd = -1;
    return -1;
  }
  return 0;
}

static int get_stats(struct kjit_ioc_stats *s)
{
  memset(s, 0, sizeof *s);
  s->size = sizeof *s;
  return ioctl(fd, KJIT_IOC_STATS, s);
}

static struct kjit_ioc_rec *get_results(struct kjit_ioc_results *r)
{
  static struct kjit_ioc_rec *recs;
  uint64_t cap = 1 << 16;
  for (;;) {
    free(recs);
    recs = calloc(cap, sizeof *recs);
    memset(r, 0, sizeof *r);
    r->size = sizeof *r;
    r->nrec = cap;
    r->rec_ptr = (uint64_t)(uintptr_t)recs;
    if (ioctl(fd, KJIT_IOC_RESULTS, r) < 0) { perror("kjitctl: results"); exit(1); }
    if (r->nrec <= cap) return recs;
    cap = r->nrec;
  }
}

static void json_str(const char *s)
{
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') putchar('\\');
    putchar(*s);
  }
  putchar('"');
}

static int tool_by_name(const char *n)
{
  for (unsigned i = 0; i < sizeof tool_names / sizeof *tool_names; i++)
    if (!strcmp(n, tool_names[i])) return (int)i;
  if (isdigit((unsigned char)n[0])) return atoi(n);
  return -1;
}

/* ---- commands ---------------------------------------------------------- */
static int cmd_config(int argc, char **argv)
{
  struct kjit_ioc_stats s;
  if (get_stats(&s) < 0) { perror("kjitctl: stats"); return 1; }
  struct kjit_ioc_config c = {
    .size = sizeof c, .tool = s.tool, .inline_instrumentation = s.inline_instrumentation,
    .use_liveness = s.use_liveness, .flush_every_entry = s.flush_every_entry, .pid = s.pid,
  };
  for (int i = 0; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) { fprintf(stderr, "kjitctl: %s needs a value\n", k); return 2; }
    i++;
    if (!strcmp(k, "--tool")) {
      int t = tool_by_name(v);
      if (t < 0) { fprintf(stderr, "kjitctl: unknown tool %s\n", v); return 2; }
      c.tool = (uint32_t)t;
    } else if (!strcmp(k, "--inline")) c.inline_instrumentation = atoi(v);
    else if (!strcmp(k, "--liveness")) c.use_liveness = atoi(v);
    else if (!strcmp(k, "--cache-kb")) c.cache_kb = atoi(v);
    else if (!strcmp(k, "--flush-every-entry")) c.flush_every_entry = atoi(v);
    else if (!strcmp(k, "--pid")) c.pid = atoi(v);
    else if (!strcmp(k, "--max-block-insns")) c.max_block_insns = atoi(v);
    else { fprintf(stderr, "kjitctl: unknown option %s\n", k); return 2; }
  }
  if (ioctl(fd, KJIT_IOC_CONFIG, &c) < 0) {
    /* The module logs which of these it was; a capture holds its plugin
     * until `kjitctl capture` has stopped it, even after its last
     * invocation. */
    fprintf(stderr, "kjitctl: config: %s%s\n", strerror(errno),
            errno == EBUSY ? " (detach everything, unload plugin modules and let any running"
                             " `kjitctl capture` finish first)" : "");
    return 1;
  }
  printf("configured: tool %s inline %u liveness %u cache_kb %u flush_every_entry %u pid %u\n",
         TOOL_NAME(c.tool), c.inline_instrumentation, c.use_liveness,
         c.cache_kb, c.flush_every_entry, c.pid);
  return 0;
}

/* Attaches every __x64_sys_* in one ftrace update.  With `attached`, the
 * names it attached (not those attached before) are returned there as
 * *nattached KJIT_NAME_MAX-byte slots, and the skipped ones are only
 * counted. */
static int attach_syscalls(char **attached, size_t *nattached)
{
  load_syms();
  size_t n = 0;
  char *names = NULL;
  for (size_t i = 0; i < nsyms; i++) {
    if (strncmp(syms[i].name, "__x64_sys_", 10)) continue;
    if (i && !strcmp(syms[i].name, syms[i - 1].name)) continue;
    names = realloc(names, (n + 1) * KJIT_NAME_MAX);
    memset(names + n * KJIT_NAME_MAX, 0, KJIT_NAME_MAX);
    snprintf(names + n * KJIT_NAME_MAX, KJIT_NAME_MAX, "%s", syms[i].name);
    n++;
  }
  if (!n) { fprintf(stderr, "kjitctl: no __x64_sys_* in /proc/kallsyms\n"); return 1; }
  int32_t *res = calloc(n, sizeof *res);
  struct kjit_ioc_attach_many m = {sizeof m, (uint32_t)n, (uint64_t)(uintptr_t)names,
                                   (uint64_t)(uintptr_t)res};
  int r = ioctl(fd, KJIT_IOC_ATTACH_MANY, &m);
  if (r < 0) { fprintf(stderr, "kjitctl: attach all-syscalls: %s\n", strerror(errno)); free(names); free(res); return 1; }
  size_t skipped = 0, k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!res[i]) {
      if (attached) memmove(names + k++ * KJIT_NAME_MAX, names + i * KJIT_NAME_MAX, KJIT_NAME_MAX);
      continue;
    }
    skipped++;
    if (!attached) printf("skipped %s: %s\n", names + i * KJIT_NAME_MAX, strerror(-res[i]));
  }
  printf("attached %d system calls, skipped %zu\n", r, skipped);
  free(res);
  if (attached) { *attached = names; *nattached = k; } else free(names);
  return 0;
}

static int attach_all_syscalls(void) { return attach_syscalls(NULL, NULL); }

static int usage(void);

/* kcov enable: the kcov tool (which creates /sys/kernel/debug/kcov) on
 * every system call kjit can attach, entered only by threads that enabled
 * coverage; kcov disable: detach, tool none.  The device stays: a client
 * that enables coverage meanwhile gets none until the next enable. */
static int cmd_kcov(const char *what)
{
  struct kjit_ioc_config c = {.size = sizeof c, .inline_instrumentation = 1, .use_liveness = 1};
  if (!strcmp(what, "enable")) {
    c.tool = KJIT_TOOL_KCOV;
    if (ioctl(fd, KJIT_IOC_CONFIG, &c) < 0) {
      fprintf(stderr, "kjitctl kcov: configure: %s%s\n", strerror(errno),
              errno == EBUSY ? " (something is attached: `kjitctl detach all`)"
              : errno == EEXIST ? " (the kernel has its own KCOV)" : "");
      return 1;
    }
    if (attach_all_syscalls()) return 1;
    /* User page faults reach handle_mm_fault from noinstr entry code:
     * attached, it is covered from there down, as the real KCOV covers it. */
    struct kjit_ioc_target pf = {.size = sizeof pf, .name = "handle_mm_fault"};
    if (ioctl(fd, KJIT_IOC_ATTACH, &pf) < 0)
      fprintf(stderr, "kjitctl kcov: page faults not covered: attach handle_mm_fault: %s\n", strerror(errno));
    printf("kcov: /sys/kernel/debug/kcov covers every attached system call and handle_mm_fault\n");
    return 0;
  }
  if (!strcmp(what, "disable")) {
    struct kjit_ioc_target all = {.size = sizeof all, .name = "*"};
    if (ioctl(fd, KJIT_IOC_DETACH, &all) < 0 || ioctl(fd, KJIT_IOC_CONFIG, &c) < 0) {
      perror("kjitctl kcov disable");
      return 1;
    }
    return 0;
  }
  return usage();
}

static const char *attach_refusal(int err)
{
  return err == EPERM ? " (never instrumented: noinstr/entry/kprobes blacklist/scheduler)"
       : err == EINVAL ? " (no fentry site, or not a valid name)"
       : err == EBUSY ? " (another ftrace user modifies this function's ip)" : "";
}

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
      if (ioctl(fd, KJIT_IOC_ATTACH, &t) == 0) {
        printf("attached %s at 0x%llx\n", t.name, (unsigned long long)t.addr);
        return 0;
      }
      if (errno != ENOENT) { fprintf(stderr, "kjitctl: attach %s: %s\n", t.name, strerror(errno)); return 1; }
      memset(&t, 0, sizeof t);
      t.size = sizeof t;
    }
    strcpy(t.name, a);
  }
  if (ioctl(fd, KJIT_IOC_ATTACH, &t) < 0) {
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
    int whole = ioctl(fd, KJIT_IOC_ATTACH_MANY, &req) < 0;
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

/* kjitctl_targets.h: globs and name lists, attached in requests of a
 * given size. */
struct names;
static int names_from_glob(const char *glob, struct names *out);
static int names_from_file(const char *path, struct names *out);
static int attach_bulk(struct names *s, size_t batch);
static struct names *names_new(void);

static int cmd_attach(int argc, char **argv)
{
  int rc = 0, nnamed = 0;
  char **named = calloc((size_t)argc + 1, sizeof *named);
  struct names *bulk = names_new();
  size_t batch = 0;
  int bulk_asked = 0;
  if (!named || !bulk) return 1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    char *end;
    if (!strcmp(a, "--batch") || !strcmp(a, "-f")) {
      if (i + 1 == argc) { free(named); return usage(); }
      if (a[1] == 'f') rc |= names_from_file(argv[++i], bulk), bulk_asked = 1;
      else batch = strtoul(argv[++i], NULL, 10);
    } else if (strpbrk(a, "*?[")) {
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

static int cmd_detach(const char *a)
{
  struct kjit_ioc_target t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  if (strlen(a) + 10 >= sizeof t.name) return 2;
  int ok = 0;
  if (strcmp(a, "all") && strncmp(a, "__x64_sys_", 10)) {
    snprintf(t.name, sizeof t.name, "__x64_sys_%s", a);
    ok = ioctl(fd, KJIT_IOC_DETACH, &t) == 0;
  }
  strcpy(t.name, !strcmp(a, "all") ? "*" : a);
  if (!ok && ioctl(fd, KJIT_IOC_DETACH, &t) < 0) {
    fprintf(stderr, "kjitctl: detach %s: %s\n", a, strerror(errno));
    return 1;
  }
  printf("detached %s\n", a);
  return 0;
}

static int cmd_list(void)
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
    if (ioctl(fd, KJIT_IOC_LIST, &r) < 0) { perror("kjitctl: list"); free(recs); return 1; }
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

/* Entries that ended in none of the ways the module counts (or are still
 * running): a departure kjit does not know about. */
static unsigned long long unknown_departures(const struct kjit_ioc_stats *s)
{
  unsigned long long known = s->completed + s->left_native_call + s->left_native_insn +
                             s->left_declined + s->left_cache_full + s->left_hooked + s->left_sleep_full +
                             s->left_sleep_off + s->sleep_lost + s->task_exits + s->sleeping +
                             s->kjit_control;
  return s->entered > known ? s->entered - known : 0;
}

/* One line: the share of the entries that ended which the cache followed
 * to their end (a return to the caller, or the task's exit), and why the
 * others left it.  Entries asleep now have not ended.  Every report starts
 * with it (stderr when stdout is data for another tool). */
static void print_completion(FILE *out, const struct kjit_ioc_stats *s)
{
  unsigned long long not_ended = s->sleeping + s->kjit_control;
  unsigned long long ended = s->entered > not_ended ? s->entered - not_ended : 0;
  double pct = ended ? 100.0 * (double)(s->completed + s->task_exits) / (double)ended : 100.0;
  fprintf(out, "completion %.3f%% (%llu returned and %llu ended in their task's exit in the cache, of %llu"
          " entries that ended; left: native_call %llu,"
          " native_insn %llu, declined %llu, cache_full %llu, hooked %llu, sleep_not_followed %llu, unknown %llu;"
          " asleep %llu; calls into kjit's own device, not counted: %llu)\n", pct,
          (unsigned long long)s->completed, (unsigned long long)s->task_exits,
          ended, (unsigned long long)s->left_native_call,
          (unsigned long long)s->left_native_insn, (unsigned long long)s->left_declined,
          (unsigned long long)s->left_cache_full, (unsigned long long)s->left_hooked,
          (unsigned long long)(s->left_sleep_full + s->left_sleep_off + s->sleep_lost),
          unknown_departures(s), (unsigned long long)s->sleeping,
          (unsigned long long)s->kjit_control);
}

/* The statistics a report starts with (its completion line or field). */
static struct kjit_ioc_stats report_stats;
static int have_report_stats;

/* Opens a JSON report: {"tool": NAME, "completion": {...} (the caller
 * continues with ", ..." and closes the object). */
static void json_open(const char *tool)
{
  printf("{\"tool\": \"%s\"", tool);
  if (!have_report_stats) return;
  const struct kjit_ioc_stats *s = &report_stats;
  printf(", \"completion\": {\"entered\": %llu, \"completed\": %llu, \"left_native_call\": %llu,"
         " \"left_native_insn\": %llu, \"left_declined\": %llu, \"left_cache_full\": %llu, \"left_hooked\": %llu,"
         " \"left_sleep_not_followed\": %llu, \"left_unknown\": %llu, \"asleep\": %llu,"
         " \"task_exit\": %llu, \"kjit_control\": %llu}", (unsigned long long)s->entered, (unsigned long long)s->completed,
         (unsigned long long)s->left_native_call, (unsigned long long)s->left_native_insn,
         (unsigned long long)s->left_declined, (unsigned long long)s->left_cache_full,
         (unsigned long long)s->left_hooked, (unsigned long long)(s->left_sleep_full + s->left_sleep_off + s->sleep_lost),
         unknown_departures(s), (unsigned long long)s->sleeping, (unsigned long long)s->task_exits,
         (unsigned long long)s->kjit_control);
}

static int cmd_stats(void)
{
  struct kjit_ioc_stats s;
  if (get_stats(&s) < 0) { perror("kjitctl: stats"); return 1; }
#define P(f) printf("%-18s %llu\n", #f, (unsigned long long)s.f)
  P(nattached); P(blocks_built); P(insns_translated); P(fallbacks); P(direct_links);
  P(chain_links); P(dispatcher_exits); P(indirect_misses); P(flushes);
  P(cache_bytes_used); P(arena_bytes_used); P(inlined_calls); P(outlined_calls);
  P(entries); P(entry_declined); P(entry_skipped); P(gate_escapes); P(reclaims); P(icount);
  P(filtered); P(exits); P(extable_mirrored); P(extable_declined); P(extable_entries);
  P(cache_size); P(text_events); P(text_flushes); P(pid); P(inline_instrumentation); P(use_liveness); P(flush_every_entry);
  P(stop_addresses);
  P(entered); P(completed); P(left_native_call); P(left_native_insn); P(left_declined);
  P(left_cache_full); P(left_sleep_full); P(left_sleep_off); P(sleep_lost); P(task_exits);
  P(sleeps_followed); P(sleeps_resumed); P(sleeping); P(kjit_control);
  P(fast_entries); P(direct_ops); P(entry_redirected); P(trace_fallthroughs); P(ibl_full);
  P(predicted_returns); P(entry_nested); P(left_hooked);
  printf("%-18s %llu\n", "left_unknown", unknown_departures(&s));
  printf("%-18s %s\n", "tool", TOOL_NAME(s.tool));
  print_completion(stdout, &s);
  return 0;
}

/* aggregated (pc, count) sorted by pc */
struct pcnt { unsigned long long pc, count; };
static int pc_cmp(const void *a, const void *b)
{
  const struct pcnt *x = a, *y = b;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}
static size_t aggregate(struct kjit_ioc_rec *recs, uint64_t n, struct pcnt *out)
{
  size_t k = 0;
  for (uint64_t i = 0; i < n; i++) { out[k].pc = recs[i].pc; out[k].count = recs[i].count; k++; }
  qsort(out, k, sizeof *out, pc_cmp);
  size_t j = 0;
  for (size_t i = 0; i < k; i++) {
    if (j && out[j - 1].pc == out[i].pc) out[j - 1].count += out[i].count;
    else out[j++] = out[i];
  }
  return j;
}

/* dropped >= 0: what the table or ring could not keep, as a last
 * `dropped N` line (JSON: a "dropped" field); < 0: nothing is dropped. */
static void print_pcnt(const char *what, struct pcnt *p, size_t n, int json, int nonzero,
                       long long dropped)
{
  char b[512];
  if (json) {
    printf("{\"%s\": [", what);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
      if (nonzero && !p[i].count) continue;
      printf("%s\n  {\"addr\": \"0x%llx\", \"count\": %llu, \"symbol\": ", first ? "" : ",", p[i].pc, p[i].count);
      json_str(symbolize(p[i].pc, b, sizeof b));
      printf("}");
      first = 0;
    }
    if (dropped >= 0) printf("\n], \"dropped\": %lld}\n", dropped);
    else printf("\n]}\n");
    return;
  }
  printf("%-18s %12s  %s\n", "address", "count", "symbol");
  for (size_t i = 0; i < n; i++) {
    if (nonzero && !p[i].count) continue;
    printf("0x%-16llx %12llu  %s\n", p[i].pc, p[i].count, symbolize(p[i].pc, b, sizeof b));
  }
  if (dropped >= 0) printf("dropped %lld\n", dropped);
}

/* What the active tool's table or ring could not keep (the module's
 * scalars, kjit_ioctl.h); -1 for tools that keep everything. */
static long long dropped_of(const struct kjit_ioc_results *r)
{
  switch (r->tool) {
    case KJIT_TOOL_BBCOUNT: case KJIT_TOOL_CALLTRACE: case KJIT_TOOL_ENTRY_COUNT:
      return (long long)r->scalars[1];
    case KJIT_TOOL_CALLSTACK: return (long long)r->scalars[2];
    default: return -1;
  }
}

/* Folded stacks from callstack events: per thread a stack of (function,
 * call-rsp); a frame is over when the same thread calls or enters at an
 * rsp >= its own, or returns with rsp >= call-rsp - 8. */
struct frame { unsigned long long fn, sp; };
struct thr { unsigned pid; int depth; struct frame st[256]; };
struct fold { char *key; unsigned long long n; };
static struct fold *folds; static size_t nfolds, capfolds;
static void fold_add(const char *key)
{
  for (size_t i = 0; i < nfolds; i++)
    if (!strcmp(folds[i].key, key)) { folds[i].n++; return; }
  if (nfolds == capfolds) { capfolds = capfolds ? capfolds * 2 : 1024; folds = realloc(folds, capfolds * sizeof *folds); }
  folds[nfolds].key = strdup(key);
  folds[nfolds].n = 1;
  nfolds++;
}
static int fold_cmp(const void *a, const void *b) { return strcmp(((const struct fold *)a)->key, ((const struct fold *)b)->key); }

/* dropped: events the ring overwrote (JSON field; the text forms are
 * `a;b;c count` lines for flamegraph.pl, so the caller says it elsewhere). */
static void folded(struct kjit_ioc_rec *recs, uint64_t n, int json, int depth_listing,
                   long long dropped)
{
  struct thr *th = NULL;
  size_t nth = 0;
  char b[512];
  static char key[65536];
  for (uint64_t i = 0; i < n; i++) {
    unsigned type = recs[i].pid_type & 0xff, pid = (unsigned)(recs[i].pid_type >> 8);
    unsigned long long pc = recs[i].pc, sp = recs[i].sp;
    if (!type) continue;
    struct thr *t = NULL;
    for (size_t j = 0; j < nth; j++) if (th[j].pid == pid) { t = &th[j]; break; }
    if (!t) { th = realloc(th, (nth + 1) * sizeof *th); t = &th[nth++]; t->pid = pid; t->depth = 0; }
    if (type == 1 || type == 2) {
      while (t->depth && t->st[t->depth - 1].sp <= sp) t->depth--;
      if (type == 2 && !t->depth) continue;     /* a call outside any entry */
      if (t->depth < 256) { t->st[t->depth].fn = pc; t->st[t->depth].sp = sp; t->depth++; }
      if (depth_listing) {
        printf("%u %*s%s %s\n", pid, 2 * (t->depth - 1), "", type == 1 ? "entry" : "call", symbolize(pc, b, sizeof b));
        continue;
      }
      size_t k = 0;
      key[0] = 0;
      for (int d = 0; d < t->depth; d++) {
        const char *s = symbolize(t->st[d].fn, b, sizeof b);
        size_t l = strlen(s);
        if (k + l + 2 >= sizeof key) break;
        if (d) key[k++] = ';';
        memcpy(key + k, s, l); k += l; key[k] = 0;
      }
      fold_add(key);
    } else if (type == 3) {
      while (t->depth && t->st[t->depth - 1].sp <= sp + 8) {
        t->depth--;
        if (depth_listing) printf("%u %*sreturn\n", pid, 2 * t->depth, "");
        if (t->st[t->depth].sp == sp + 8) break;
      }
    }
  }
  if (depth_listing) return;
  qsort(folds, nfolds, sizeof *folds, fold_cmp);
  if (json) {
    json_open("callstack"); printf(", \"folded\": [");
    for (size_t i = 0; i < nfolds; i++) {
      printf("%s\n  {\"stack\": ", i ? "," : "");
      json_str(folds[i].key);
      printf(", \"count\": %llu}", folds[i].n);
    }
    printf("\n], \"dropped\": %lld}\n", dropped);
  } else {
    for (size_t i = 0; i < nfolds; i++) printf("%s %llu\n", folds[i].key, folds[i].n);
  }
}

static int cmd_report(int json, int fold, int trace)
{
  struct kjit_ioc_results r;
  struct kjit_ioc_rec *recs = get_results(&r);
  const char *tn = TOOL_NAME(r.tool);
  char b[512];
  uint64_t n = r.nrec;
  have_report_stats = get_stats(&report_stats) == 0;
  if (!json && have_report_stats) print_completion((fold || trace) ? stderr : stdout, &report_stats);
  switch (r.tool) {
    case KJIT_TOOL_NONE:
      if (json) { json_open("none"); printf("}\n"); } else printf("tool none: no results\n");
      return 0;
    case KJIT_TOOL_ICOUNT:
      if (json) { json_open("icount"); printf(", \"instructions\": %llu}\n", (unsigned long long)r.scalars[0]); }
      else printf("%-24s %llu\n", "instructions", (unsigned long long)r.scalars[0]);
      return 0;
    case KJIT_TOOL_BRANCH_HINTS: {
      const char *k[] = {"executed", "taken", "predicted_right", "predicted_wrong", "hinted", "hint_right"};
      if (json) { json_open("branch_hints"); for (int i = 0; i < 6; i++) printf(", \"%s\": %llu", k[i], (unsigned long long)r.scalars[i]); printf("}\n"); }
      else for (int i = 0; i < 6; i++) printf("%-24s %llu\n", k[i], (unsigned long long)r.scalars[i]);
      return 0;
    }
    case KJIT_TOOL_LOCK_CONTENTION:
      if (json) { json_open("lock_contention"); printf(", \"attempts\": %llu, \"failures\": %llu}\n", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[1]); }
      else printf("%-24s %llu\n%-24s %llu\n", "cmpxchg_attempts", (unsigned long long)r.scalars[0], "cmpxchg_failures", (unsigned long long)r.scalars[1]);
      return 0;
    case KJIT_TOOL_BBCOUNT:
    case KJIT_TOOL_ENTRY_COUNT: {
      struct pcnt *p = calloc(n + 1, sizeof *p);
      size_t k = aggregate(recs, n, p);
      /* counters: the module's own records, before merging by address;
       * equal to distinct when it keeps one counter per block or routine. */
      const char *storage = r.tool != KJIT_TOOL_BBCOUNT ? "" : r.scalars[2] ? " (per-CPU)" : " (locked adds)";
      if (!json) printf("tool %s: %s %llu, distinct %zu, counters %llu%s\n", tn, r.tool == KJIT_TOOL_BBCOUNT ? "blocks executed" : "routines", (unsigned long long)(r.tool == KJIT_TOOL_BBCOUNT ? r.scalars[0] : k), k, (unsigned long long)n, storage);
      else if (r.tool == KJIT_TOOL_BBCOUNT) { json_open("bbcount"); printf(", \"total\": %llu, \"counters\": %llu, \"counters_percpu\": %s, \"dropped\": %llu, \"data\": ", (unsigned long long)r.scalars[0], (unsigned long long)n, r.scalars[2] ? "true" : "false", (unsigned long long)r.scalars[1]); }
      else { json_open("entry_count"); printf(", \"counters\": %llu, \"dropped\": %llu, \"data\": ", (unsigned long long)n, (unsigned long long)r.scalars[1]); }
      print_pcnt(r.tool == KJIT_TOOL_BBCOUNT ? "blocks" : "calls", p, k, json, 0, json ? -1 : dropped_of(&r));
      if (json) printf("}\n");
      return 0;
    }
    case KJIT_TOOL_BRANCHES: {
      /* The conditional branches (the block records come first); kjitctl
       * report reads the blocks from a recording. */
      uint64_t nbr = 0;
      if (json) { json_open("branches"); printf(", \"blocks_total\": %llu, \"dropped\": %llu, \"branches\": [", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[3]); }
      else printf("tool branches: blocks executed %llu, branches dropped %llu\n%-48s %12s %12s\n", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[3], "branch", "taken", "not_taken");
      for (uint64_t i = 0; i < n; i++) {
        if ((recs[i].pid_type & 0xff) != KJIT_REC_BRANCH) continue;
        symbolize(recs[i].pc, b, sizeof b);
        if (json) { printf("%s{\"branch\": ", nbr ? ", " : ""); json_str(b); printf(", \"taken\": %llu, \"not_taken\": %llu}", (unsigned long long)recs[i].count, (unsigned long long)recs[i].sp); }
        else printf("%-48s %12llu %12llu\n", b, (unsigned long long)recs[i].count, (unsigned long long)recs[i].sp);
        nbr++;
      }
      if (json) printf("]}\n");
      return 0;
    }
    case KJIT_TOOL_CALLTRACE:
      if (json) {
        json_open("calltrace"); printf(", \"calls\": %llu, \"dropped\": %llu, \"targets\": [", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[1]);
        for (uint64_t i = 0; i < n; i++) { printf("%s", i ? ", " : ""); json_str(symbolize(recs[i].pc, b, sizeof b)); }
        printf("]}\n");
      } else {
        printf("tool calltrace: %llu calls (last %llu shown, oldest first)\n", (unsigned long long)r.scalars[0], (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) printf("%s\n", symbolize(recs[i].pc, b, sizeof b));
        printf("dropped %llu\n", (unsigned long long)r.scalars[1]);
      }
      return 0;
    case KJIT_TOOL_CALLSTACK:
      if (fold || json) folded(recs, n, json, 0, dropped_of(&r));
      else if (trace) folded(recs, n, 0, 1, dropped_of(&r));
      else {
        printf("tool callstack: %llu events (ring %llu); use --folded or --trace\n", (unsigned long long)r.scalars[0], (unsigned long long)r.scalars[1]);
        folded(recs, n, 0, 0, dropped_of(&r));
        printf("dropped %lld\n", dropped_of(&r));
      }
      /* Folded and trace lines are parsed by other tools: the count goes
       * to stderr there. */
      if (!json && (fold || trace)) fprintf(stderr, "dropped %lld\n", dropped_of(&r));
      return 0;
  }
  return 1;
}

static int cmd_blocks_calls(int blocks, int json)
{
  struct kjit_ioc_results r;
  struct kjit_ioc_rec *recs = get_results(&r);
  uint64_t n = r.nrec;
  struct pcnt *p = calloc(n + 1, sizeof *p);
  size_t k = 0;
  if (blocks) {
    if (r.tool != KJIT_TOOL_BBCOUNT) { fprintf(stderr, "kjitctl: blocks needs --tool bbcount\n"); return 1; }
    k = aggregate(recs, n, p);
    print_pcnt("blocks", p, k, json, 1, dropped_of(&r));
    return 0;
  }
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
  print_pcnt("calls", p, k, json, 1, dropped_of(&r));
  return 0;
}

/* Where entries left the cache: one line per native target and reason,
 * most frequent first (completions, the returns to callers, are left out
 * unless --all). */
static const char *const departure_names[] = {"completed", "native_call", "native_insn", "declined",
                                              "cache_full", "hooked"};
static int rec_count_desc(const void *a, const void *b)
{
  const struct kjit_ioc_rec *x = a, *y = b;
  return x->count < y->count ? 1 : x->count > y->count ? -1 : (x->pc > y->pc) - (x->pc < y->pc);
}
static int cmd_departures(int json, int all)
{
  uint64_t cap = 4096;
  struct kjit_ioc_rec *recs = calloc(cap, sizeof *recs);
  struct kjit_ioc_results r = {.size = sizeof r, .nrec = cap, .rec_ptr = (uint64_t)(uintptr_t)recs};
  char b[512];
  if (!recs || ioctl(fd, KJIT_IOC_DEPARTURES, &r) < 0) { perror("kjitctl: departures"); return 1; }
  uint64_t n = r.nrec < cap ? r.nrec : cap;
  qsort(recs, n, sizeof *recs, rec_count_desc);
  if (json) printf("{\"departures\": [");
  else printf("%-12s %12s  %s\n", "reason", "count", "target");
  int first = 1;
  for (uint64_t i = 0; i < n; i++) {
    unsigned why = (unsigned)recs[i].pid_type;
    if (!recs[i].count || (!all && why == 0)) continue;
    const char *wn = why < sizeof departure_names / sizeof *departure_names ? departure_names[why] : "?";
    if (json) {
      printf("%s\n  {\"reason\": \"%s\", \"count\": %llu, \"addr\": \"0x%llx\", \"symbol\": ", first ? "" : ",",
             wn, (unsigned long long)recs[i].count, (unsigned long long)recs[i].pc);
      json_str(symbolize(recs[i].pc, b, sizeof b));
      printf("}");
    } else {
      printf("%-12s %12llu  %s\n", wn, (unsigned long long)recs[i].count, symbolize(recs[i].pc, b, sizeof b));
    }
    first = 0;
  }
  if (json) printf("\n]}\n");
  free(recs);
  return 0;
}

#include "kjitctl_capture.h"
#include "kjitctl_targets.h"
#include "kjitctl_record.h"
#include "kjitctl_report_exec.h"

/* One usage entry per command: `kjitctl COMMAND --help` prints its own,
 * `kjitctl --help` all of them. */
static const struct { const char *cmd, *text; } usages[] = {
  {"record", "kjitctl record [-t TOOL] [-e TARGETS] [-o kjit.data] (-c 'CMD' | -p PID | -- CMD ARGS)\n"},
  {"report", "kjitctl report [-i kjit.data] [--vmlinux PATH] [--format F] (host or guest; kjit-report)\n"},
  {"list", "kjitctl list [GLOB]   attached functions; with GLOB, attachable ones and why kjit refuses others\n"},
  {"config", "kjitctl config [--tool T] [--inline 0|1] [--liveness 0|1] [--cache-kb N]\n"
             "               [--flush-every-entry 0|1] [--pid P] [--max-block-insns N]\n"
             "               re-create the engine (nothing may be attached)\n"},
  {"attach", "kjitctl attach SYSCALL|NR|FUNC|all-syscalls ...\n"
             "       kjitctl attach [--batch N] GLOB... | -f FILE   attachable functions by name,\n"
             "               N a request (default: all in one)\n"},
  {"detach", "kjitctl detach SYSCALL|FUNC|all\n"},
  {"stats", "kjitctl stats   the engine's counters\n"},
  {"flush", "kjitctl flush   drop every translation\n"},
  {"reset", "kjitctl reset   zero the configured tool's results\n"},
  {"icount-reset", "kjitctl icount-reset   the same as reset\n"},
  {"show", "kjitctl show [--json|--folded|--trace]   live results of the configured tool\n"},
  {"blocks", "kjitctl blocks [--json]   bbcount's blocks, live\n"},
  {"calls", "kjitctl calls [--json]   entry_count's or callstack's calls, live\n"},
  {"departures", "kjitctl departures [--json] [--all]   where entries left the cache\n"},
  {"kcov", "kjitctl kcov enable|disable   a KCOV device (/sys/kernel/debug/kcov) on this stock kernel\n"},
  {"capture", "kjitctl capture --syscall NAME|--func FUNC [--pid P] [--count N] [--first-complete]\n"
              "                [--timeout S] [--buf-kb KB] -o FILE [-- CMD...]\n"
              "       kjitctl capture --all-syscalls -o DIR [--timeout S] [--buf-kb KB] [--code-kb KB]\n"
              "                [--all-code] [--pid P | -- CMD...]   one complete invocation of every\n"
              "                system call CMD and its children make: DIR/NAME.kjitcap\n"},
};

static int usage_to(FILE *to)
{
  for (unsigned i = 0; i < sizeof usages / sizeof *usages; i++)
    fprintf(to, "%s%s", i ? "       " : "usage: ", usages[i].text);
  fprintf(to,
          "       kjitctl --version | COMMAND --help\n"
          "tools: none icount bbcount calltrace branch_hints lock_contention entry_count callstack branches kcov\n"
          "exit status: 0 ok, 1 kjit or I/O error, 2 usage error; record: the workload's status\n"
          "see kjitctl(8): man -l docs/kjitctl.8\n");
  return to == stdout ? 0 : 2;
}

/* `kjitctl COMMAND --help`: that command's usage, on stdout, status 0. */
static int command_usage(const char *cmd)
{
  for (unsigned i = 0; i < sizeof usages / sizeof *usages; i++)
    if (!strcmp(usages[i].cmd, cmd)) {
      printf("usage: %s", usages[i].text);
      return 0;
    }
  return usage_to(stdout);
}

static int usage(void) { return usage_to(stderr); }

static int wants_help(int argc, char **argv)
{
  for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 2) return usage();
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) return usage_to(stdout);
  if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
    printf("kjitctl %s (ABI %u)\n", KJIT_VERSION, KJITCTL_ABI);
    return 0;
  }
  /* report reads a file: no device, and usually on another machine */
  if (!strcmp(cmd, "report")) return exec_report(argv[0], argc - 2, argv + 2);
  if (!strcmp(cmd, "record") && wants_help(argc, argv)) return rec_usage(stdout);
  int ok = 0;
  for (unsigned i = 0; i < sizeof usages / sizeof *usages; i++) ok |= !strcmp(cmd, usages[i].cmd);
  if (ok && wants_help(argc, argv)) return command_usage(cmd);
  if (!ok) {
    fprintf(stderr, "kjitctl: unknown command %s\n", cmd);
    return usage();
  }
  if (open_dev()) return 1;
  int json = argc > 2 && !strcmp(argv[2], "--json");
  if (!strcmp(cmd, "record")) return cmd_record(argc - 1, argv + 1);
  if (!strcmp(cmd, "config")) return cmd_config(argc - 2, argv + 2);
  if (!strcmp(cmd, "attach")) return argc < 3 ? usage() : cmd_attach(argc - 2, argv + 2);
  if (!strcmp(cmd, "detach")) return argc != 3 ? usage() : cmd_detach(argv[2]);
  if (!strcmp(cmd, "list")) return argc > 2 ? cmd_list_glob(argv[2]) : cmd_list();
  if (!strcmp(cmd, "stats")) return cmd_stats();
  if (!strcmp(cmd, "capture")) return cmd_capture(argc - 2, argv + 2);
  if (!strcmp(cmd, "kcov")) return argc != 3 ? usage() : cmd_kcov(argv[2]);
  if (!strcmp(cmd, "show"))
    return cmd_report(json, argc > 2 && !strcmp(argv[2], "--folded"), argc > 2 && !strcmp(argv[2], "--trace"));
  if (!strcmp(cmd, "blocks")) return cmd_blocks_calls(1, json);
  if (!strcmp(cmd, "departures"))
    return cmd_departures(json, (argc > 2 && !strcmp(argv[argc - 1], "--all")));
  if (!strcmp(cmd, "calls")) return cmd_blocks_calls(0, json);
  if (!strcmp(cmd, "flush") || !strcmp(cmd, "reset") || !strcmp(cmd, "icount-reset")) {
    if (ioctl(fd, !strcmp(cmd, "flush") ? KJIT_IOC_FLUSH : KJIT_IOC_RESET_RESULTS, 0) < 0) {
      perror("kjitctl");
      return 1;
    }
    return 0;
  }
  return usage();
}
