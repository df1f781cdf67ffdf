// SPDX-License-Identifier: GPL-2.0
/* kjitctl capture --all-syscalls: one complete invocation of every distinct
 * system call a workload makes, each as DIR/NAME.kjitcap (NAME without
 * __x64_sys_), for `kjit-sim replay`.
 *
 *   kjitctl capture --all-syscalls -o DIR [--timeout S] [--buf-kb KB]
 *                   [--code-kb KB] [--all-code] [--pid P] [-- CMD ARGS...]
 *
 * kjitctl attaches every system call but exit and exit_group, which never
 * return (the ones attached before stay, the others are detached at the
 * end), arms one capture whose targets are all
 * attached functions (KJIT_CAPTURE_EACH_ATTACHED) for the workload and its
 * children (KJIT_CAPTURE_DESCENDANTS), runs CMD and stops when it exits (or
 * after S seconds, killing its process group), or without CMD records
 * thread group P (0: every task) and its children until every target is
 * done or S (default 30) seconds passed.  The module records one invocation
 * at a time, each target until one is complete (END RETURNED, or SLEPT with
 * its RESUME records) or after 4 that were not.  The event buffer defaults
 * to the module's maximum (64 MiB), the code buffer to 16 MiB.
 *
 * Each invocation is named by its entry pc (BEGIN's, minus the fentry call and an ENDBR)
 * in /proc/kallsyms.  A file holds the code of the pages its invocation
 * ran in and the thunks (--all-code: the whole code buffer, as a single
 * capture's files do).  The last line is the summary:
 *   capture all-syscalls: N system calls recorded, M without a complete
 *   invocation: NAME: K attempts, REASON; ...
 * The line before it names the system calls entered but not recorded
 * whole, from the module's TARGET records: how often each was entered and
 * how often refused because another task's invocation was being recorded,
 * and which one (NAME: entered N times, K while HOLDER of pid P was
 * recorded).  An entry the engine declined (the whole cache waiting for a
 * reclaim, a first block it could not build) runs natively and is no
 * entry there; those are counted by reason. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "kjitctl.h"
#include "progress.h"

#define CAPA_FENTRY_CALL_SIZE 5   /* the entry block starts after the call to __fentry__ */
#define CAPA_ENDBR_SIZE 4         /* endbr64 before the fentry site under IBT */

struct capa_call {
  const char *name;        /* the function, as in /proc/kallsyms */
  unsigned attempts;       /* invocations recorded */
  int written;             /* its first complete invocation is in a file */
  uint32_t last_reason;    /* END reason of the last one */
  unsigned last_sleeps;    /* its RESUME records */
};

static const char *capa_reason(uint32_t why, unsigned sleeps)
{
  switch (why) {
    case KJIT_CAP_END_RETURNED: return "returned";
    case KJIT_CAP_END_OVERFLOW: return "cut by the full event buffer";
    case KJIT_CAP_END_LEFT_CACHE: return "left the cache";
    case KJIT_CAP_END_STOPPED: return "still running when the capture stopped";
    case KJIT_CAP_END_SLEPT: return sleeps ? "slept" : "slept without RESUME records";
    case KJIT_CAP_END_READ_TOO_LARGE: return "a read too large to record";
    default: return "no end";
  }
}

/* First index of syms[] at or above address a. */
static size_t capa_sym_at_or_above(unsigned long long a)
{
  load_syms();
  size_t lo = 0, hi = nsyms;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (syms[mid].addr < a) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* The function whose entry block is at entry_pc; a __x64_sys_ name when
 * several symbols share its address (aliases), NULL when none. */
static const char *capa_entry_name(uint64_t entry_pc)
{
  /* The fentry site is the function's first instruction, or the one after
   * its ENDBR (4 bytes, an IBT kernel's address-taken functions). */
  static const unsigned site_offsets[] = {0, CAPA_ENDBR_SIZE};
  const char *best = NULL;
  for (size_t k = 0; k < 2 && !best; k++) {
    unsigned long long a = entry_pc - CAPA_FENTRY_CALL_SIZE - site_offsets[k];
    for (size_t i = capa_sym_at_or_above(a); i < nsyms && syms[i].addr == a; i++)
      if (!best || (!strncmp(syms[i].name, "__x64_sys_", 10) && strncmp(best, "__x64_sys_", 10)))
        best = syms[i].name;
  }
  return best;
}

/* Whether a code record at pc is a thunk's (capture.c adds their bytes). */
static int capa_is_thunk(uint64_t pc)
{
  for (size_t i = capa_sym_at_or_above(pc); i < nsyms && syms[i].addr == pc; i++)
    if (capf_fixed_symbol(syms[i].name)) return 1;
  return 0;
}

static int capa_u64_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The code records invocation [ev, evend) needs, in `out`, sorted: every
 * record in a page that one of the blocks it ran touches, and the thunks.
 * The simulator maps whole pages, zeros where no bytes are given; a replay
 * that leaves the recorded path then runs the kernel's code, as far as any
 * invocation built it, and fails at the block check rather than in zeros. */
static size_t capa_codes_for(const unsigned char *ev, const unsigned char *evend,
                             const struct capf_code *codes, size_t ncodes, struct capf_code *out)
{
  size_t nb = 0, capb = 256, np = 0, capp = 256, n = 0;
  uint64_t *pcs = malloc(capb * sizeof *pcs), *pages = malloc(capp * sizeof *pages);
  for (const unsigned char *p = ev; p < evend;) {
    const struct kjit_cap_rec *r = (const void *)p;
    if (r->len < sizeof *r || p + r->len > evend) break;
    if (r->type == KJIT_CAP_BLOCK) {
      if (nb == capb) pcs = realloc(pcs, (capb *= 2) * sizeof *pcs);
      pcs[nb++] = ((const struct kjit_cap_block *)r)->pc;
    }
    p += r->len;
  }
  qsort(pcs, nb, sizeof *pcs, capa_u64_cmp);
  for (size_t i = 0; i < ncodes; i++) {
    if (!bsearch(&codes[i].pc, pcs, nb, sizeof *pcs, capa_u64_cmp)) continue;
    for (uint64_t pg = codes[i].pc >> 12; pg <= (codes[i].pc + codes[i].len - 1) >> 12; pg++) {
      if (np == capp) pages = realloc(pages, (capp *= 2) * sizeof *pages);
      pages[np++] = pg;
    }
  }
  qsort(pages, np, sizeof *pages, capa_u64_cmp);
  for (size_t i = 0; i < ncodes; i++) {
    uint64_t first = codes[i].pc >> 12, last = (codes[i].pc + codes[i].len - 1) >> 12;
    if (bsearch(&first, pages, np, sizeof *pages, capa_u64_cmp) ||
        bsearch(&last, pages, np, sizeof *pages, capa_u64_cmp) || capa_is_thunk(codes[i].pc))
      out[n++] = codes[i];
  }
  free(pcs);
  free(pages);
  return n;
}

static int capa_call_cmp(const void *a, const void *b)
{
  return strcmp(((const struct capa_call *)a)->name, ((const struct capa_call *)b)->name);
}

static const char *capa_short(const char *name)
{
  return strncmp(name, "__x64_sys_", 10) ? name : name + 10;
}

/* Waits for the workload (killing its process group after timeout_s, 0:
 * never); its wait status. */
static int capa_wait(pid_t child, unsigned timeout_s, int *timed_out)
{
  struct timespec t0, t1;
  int st = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pid_t w = timeout_s ? waitpid(child, &st, WNOHANG) : waitpid_progress(child, &st);
    if (!w && !timeout_s) continue;   /* waitpid_progress drew the line and waited */
    progress_entries("the workload runs");
    if (w == child || (w < 0 && errno != EINTR)) return st;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (timeout_s && t1.tv_sec - t0.tv_sec >= (long)timeout_s) {
      *timed_out = 1;
      kill(-child, SIGKILL);
      kill(child, SIGKILL);
      waitpid(child, &st, 0);
      return st;
    }
    usleep(20000);
  }
}

/* What one run recorded: the module's buffers, and how many entries of
 * any task the engine declined while it ran, by reason (kjit_ioc_stats). */
struct capa_recording {
  struct kjit_ioc_capture_read r;
  unsigned char *evb, *cob;
  uint64_t declined, declined_cache_full, declined_unbuilt;
  int has_workload, wstatus, timed_out;   /* wait status of the workload kjitctl ran */
};

/* System calls that never return: no invocation of theirs can be complete,
 * and one being recorded holds the capture from the task's exit until it is
 * off its CPU for good (os/linux/capture/capture_log.c reaps it then).  A
 * parent woken by that exit runs first where the waker preempts the dying
 * task (PREEMPT_RT), and everything it then called went unrecorded.  Not
 * attached here. */
static const char *const capa_never_return[] = {"__x64_sys_exit", "__x64_sys_exit_group", NULL};

/* Attaches every system call but those, arms one capture of all attached functions
 * for pid (or the held workload) and its children, runs until the workload
 * ends (or the timeout), reads the buffers, and detaches what it attached:
 * all at once when nothing else was.  0, or 1 after a message. */
static int capa_record(const struct capture_args *a, unsigned timeout, const struct kjit_ioc_stats *st,
                       struct capa_recording *out)
{
  unsigned pid = a->pid;
  uint32_t had_attached = st->nattached;
  int go_w = -1;
  pid_t child = 0;
  if (a->cmdv) {
    child = spawn_held(a->cmdv, &go_w, 1);  /* a timeout kills the whole group */
    if (child < 0) return 1;
    pid = child;
  }
  char *att = NULL;
  size_t natt = 0;
  if (attach_syscalls(&att, &natt, capa_never_return)) { if (child) kill(child, SIGKILL); return 1; }

  struct kjit_ioc_capture c;
  memset(&c, 0, sizeof c);
  c.size = sizeof c;
  c.flags = KJIT_CAPTURE_EACH_ATTACHED | KJIT_CAPTURE_DESCENDANTS;
  c.pid = pid;
  c.buf_kb = a->buf_kb;
  c.code_kb = a->code_kb;
  int rc = 0;
  if (ioctl(kjit_fd, KJIT_IOC_CAPTURE_START, &c) < 0) {
    fprintf(stderr, "kjitctl capture: start: %s\n", strerror(errno));
    if (child) kill(child, SIGKILL);
    rc = 1;
  }
  out->has_workload = child != 0;
  progress_begin("kjitctl capture");
  if (!rc && child) {
    release_held(go_w);
    out->wstatus = capa_wait(child, timeout, &out->timed_out);
  } else if (!rc) {
    capture_wait_done(timeout);
  }
  progress_end();
  ioctl(kjit_fd, KJIT_IOC_CAPTURE_STOP, 0);
  struct kjit_ioc_stats st_end;
  if (get_stats(&st_end) == 0) {
    out->declined = st_end.entry_declined - st->entry_declined;
    out->declined_cache_full = st_end.calls_declined_cache_full - st->calls_declined_cache_full;
    out->declined_unbuilt = st_end.calls_declined_unbuilt - st->calls_declined_unbuilt;
  }
  if (!rc && capture_read(&out->r, &out->evb, &out->cob)) rc = 1;
  struct kjit_ioc_target t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  if (!had_attached) {
    strcpy(t.name, "*");
    ioctl(kjit_fd, KJIT_IOC_DETACH, &t);
  } else {
    for (size_t i = 0; i < natt; i++) {
      snprintf(t.name, sizeof t.name, "%s", att + i * KJIT_NAME_MAX);
      ioctl(kjit_fd, KJIT_IOC_DETACH, &t);
    }
  }
  free(att);
  return rc;
}

/* Every invocation of the recording counted under its function's name in
 * *calls (sorted by name), the first complete one of each written to DIR.
 * 0, or 1 when a file could not be written. */
static int capa_write_files(const struct capture_args *a, const struct capa_recording *rec,
                            struct capf_code *codes, size_t ncodes, struct capa_call **callsp, size_t *ncallsp)
{
  struct capf_code *mine = malloc((ncodes + 1) * sizeof *mine);
  struct capa_call *calls = NULL;
  size_t ncalls = 0;
  int rc = 0;
  struct capf_invocation inv;
  const unsigned char *pos = rec->evb;
  while (capf_next_invocation(&pos, rec->evb + rec->r.event_bytes, &inv)) {
    const struct kjit_cap_begin *bg = (const void *)inv.begin;
    const char *name = capa_entry_name(bg->entry_pc);
    char unknown[32];
    if (!name) { snprintf(unknown, sizeof unknown, "0x%llx", (unsigned long long)bg->entry_pc); name = unknown; }
    size_t k = 0;
    while (k < ncalls && strcmp(calls[k].name, name)) k++;
    if (k == ncalls) {
      calls = realloc(calls, (ncalls + 1) * sizeof *calls);
      calls[ncalls++] = (struct capa_call){.name = strdup(name)};
    }
    struct capa_call *cl = &calls[k];
    uint32_t why = inv.end_reason;
    cl->attempts++;
    cl->last_reason = why;
    cl->last_sleeps = inv.sleeps;
    int complete = why == KJIT_CAP_END_RETURNED || (why == KJIT_CAP_END_SLEPT && inv.sleeps);
    if (complete && !cl->written) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s.kjitcap", a->out, capa_short(cl->name));
      size_t nmine = a->all_code ? ncodes : capa_codes_for(inv.begin, inv.end, codes, ncodes, mine);
      if (capf_write(path, cl->name, inv.begin, inv.end, a->all_code ? codes : mine, nmine, rec->r.flags,
                     cl->name, 1) == 0)
        cl->written = 1;
      else
        rc = 1;
    }
  }
  qsort(calls, ncalls, sizeof *calls, capa_call_cmp);
  free(mine);
  *callsp = calls;
  *ncallsp = ncalls;
  return rc;
}

/* Whether the recording wrote a file for function `name`. */
static int capa_written(const struct capa_call *calls, size_t ncalls, const char *name)
{
  for (size_t i = 0; i < ncalls; i++)
    if (!strcmp(calls[i].name, name)) return calls[i].written;
  return 0;
}

/* One line naming every target the workload entered without a complete
 * invocation, with its entries refused while another was recorded (the
 * TARGET records after the last END). */
static void capa_print_targets(const struct capa_recording *rec, const struct capa_call *calls, size_t ncalls)
{
  const unsigned char *p = rec->evb, *end = rec->evb + rec->r.event_bytes;
  int first = 1;
  while (p + sizeof(struct kjit_cap_rec) <= end) {
    const struct kjit_cap_rec *h = (const void *)p;
    if (h->len < sizeof *h || p + h->len > end) break;
    p += h->len;
    if (h->type != KJIT_CAP_TARGET || h->len < sizeof(struct kjit_cap_target)) continue;
    const struct kjit_cap_target *t = (const void *)h;
    const char *name = capa_entry_name(t->entry_pc);
    if (!t->entries || !name || capa_written(calls, ncalls, name)) continue;
    printf("%s %s: entered %u time%s", first ? "capture all-syscalls: entered, not recorded whole:" : ";",
           capa_short(name), t->entries, t->entries == 1 ? "" : "s");
    if (t->busy) {
      const char *holder = t->holder_pc ? capa_entry_name(t->holder_pc) : NULL;
      printf(", %u while %s of pid %u was recorded", t->busy, holder ? capa_short(holder) : "a call",
             t->holder_pid);
    }
    first = 0;
  }
  if (!first) printf("\n");
}

/* The lines after the files: what the buffers and the cache lost, the
 * calls entered but not recorded whole, and the summary (the last line).
 * How many system calls have a file. */
static size_t capa_summary(const struct capture_args *a, const struct capa_recording *rec, size_t ncodes,
                           const struct capa_call *calls, size_t ncalls)
{
  const struct kjit_ioc_capture_read *r = &rec->r;
  size_t nwritten = 0;
  for (size_t i = 0; i < ncalls; i++) nwritten += calls[i].written;
  if (r->flags & KJIT_CAP_F_OVERFLOW)
    printf("capture all-syscalls: the event buffer (%u KiB) overflowed: system calls entered after it filled"
           " were not recorded (--buf-kb)\n", a->buf_kb);
  if (r->flags & KJIT_CAP_F_CODE_OVERFLOW)
    printf("capture all-syscalls: the code buffer (%u KiB) overflowed: blocks built after it filled lack"
           " their bytes, their replays fail (--code-kb)\n", a->code_kb);
  /* A declined entry runs natively: what it called is not recorded, and no
   * END says so. */
  if (rec->declined_cache_full)
    printf("capture all-syscalls: %llu entries (of any task) ran natively while a full code cache was"
           " reclaimed: system calls made then were not recorded (a larger cache: insmod kjit.ko cache_kb=)\n",
           (unsigned long long)rec->declined_cache_full);
  if (rec->declined > rec->declined_cache_full)
    printf("capture all-syscalls: %llu more entries (of any task) ran natively, %llu of them because their"
           " first block could not be built (text being rewritten, a full exception table)\n",
           (unsigned long long)(rec->declined - rec->declined_cache_full),
           (unsigned long long)rec->declined_unbuilt);
  printf("capture all-syscalls: events %llu bytes, code %llu bytes (%zu blocks)\n",
         (unsigned long long)r->event_bytes, (unsigned long long)r->code_bytes, ncodes);
  capa_print_targets(rec, calls, ncalls);
  printf("capture all-syscalls: %zu system calls recorded, %zu without a complete invocation%s",
         nwritten, ncalls - nwritten, ncalls > nwritten ? ":" : "");
  int first = 1;
  for (size_t i = 0; i < ncalls; i++) {
    if (calls[i].written) continue;
    printf("%s %s: %u attempt%s, %s", first ? "" : ";", capa_short(calls[i].name), calls[i].attempts,
           calls[i].attempts == 1 ? "" : "s", capa_reason(calls[i].last_reason, calls[i].last_sleeps));
    first = 0;
  }
  printf("\n");
  return nwritten;
}

int capture_all_syscalls(const struct capture_args *a)
{
  const char *dir = a->out;
  unsigned timeout = a->timeout;
  if (!dir || (a->cmdv && (!*a->cmdv || a->pid))) {
    fprintf(stderr, "usage: kjitctl capture --all-syscalls -o DIR [--timeout S] [--buf-kb KB] [--code-kb KB]"
                    " [--all-code] [--pid P | -- CMD ARGS...]\n");
    return 2;
  }
  if (!a->cmdv && !a->timeout_set) timeout = 30;
  if (mkdir(dir, 0755) && errno != EEXIST) { fprintf(stderr, "kjitctl capture: %s: %s\n", dir, strerror(errno)); return 1; }
  struct kjit_ioc_stats st;
  if (get_stats(&st) < 0) { perror("kjitctl capture: stats"); return 1; }
  if (st.pid)
    fprintf(stderr, "kjitctl capture: the engine redirects only thread group %u (kjitctl config --pid):"
                    " other tasks, the workload's children among them, run natively and are not recorded\n", st.pid);

  struct capa_recording rec = {0};
  int rc = capa_record(a, timeout, &st, &rec);
  if (rc) { free(rec.evb); free(rec.cob); return rc; }
  if (rec.has_workload)
    printf("workload: %s %d%s\n", WIFEXITED(rec.wstatus) ? "exit status" : "killed by signal",
           WIFEXITED(rec.wstatus) ? WEXITSTATUS(rec.wstatus) : WTERMSIG(rec.wstatus),
           rec.timed_out ? " (timeout)" : "");

  size_t ncodes, ncalls;
  struct capf_code *codes = capf_codes(rec.cob, rec.r.code_bytes, &ncodes);
  struct capa_call *calls;
  rc = capa_write_files(a, &rec, codes, ncodes, &calls, &ncalls);
  size_t nwritten = capa_summary(a, &rec, ncodes, calls, ncalls);
  for (size_t i = 0; i < ncalls; i++) free((void *)calls[i].name);
  free(calls); free(codes); free(rec.evb); free(rec.cob);
  if (!nwritten) { fprintf(stderr, "kjitctl capture: no complete invocation was recorded\n"); return 1; }
  return rc;
}
