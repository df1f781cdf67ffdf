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
 * threads and its child processes make, as DIR/NAME.kjitcap (NAME without
 * __x64_sys_), and prints which had none (kjitctl_capture_all.h).
 * Included by kjitctl.c (kept header-only so kjitctl stays one compilation
 * unit). */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define CAPF_SENTINEL 0xfffffffff0000000ull

struct capf_buf { unsigned char *p; size_t n, cap; };

static void capf_put(struct capf_buf *b, const void *v, size_t n)
{
  if (b->n + n > b->cap) {
    size_t c = b->cap ? b->cap * 2 : 4096;
    while (c < b->n + n) c *= 2;
    b->p = realloc(b->p, c);
    if (!b->p) { fprintf(stderr, "kjitctl: out of memory\n"); exit(1); }
    b->cap = c;
  }
  memcpy(b->p + b->n, v, n);
  b->n += n;
}
static void capf_u32(struct capf_buf *b, uint32_t v) { capf_put(b, &v, 4); }
static void capf_u64(struct capf_buf *b, uint64_t v) { capf_put(b, &v, 8); }

static void capf_section(struct capf_buf *out, uint32_t type, const struct capf_buf *pl)
{
  capf_u32(out, type);
  capf_u64(out, pl->n);
  capf_u32(out, kjit_capf_section_crc(type, pl->p, pl->n));
  if (pl->n) capf_put(out, pl->p, pl->n);
}

struct capf_code { uint64_t pc; uint32_t len; const unsigned char *bytes; };
static int capf_code_cmp(const void *a, const void *b)
{
  const struct capf_code *x = a, *y = b;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Whether a kallsyms name is one the replay needs whatever the entry (the
 * thunks the engine treats as transfers, fentry, the scheduler funnel). */
static int capf_fixed_symbol(const char *name)
{
  return !strcmp(name, "__x86_return_thunk") || !strncmp(name, "__x86_indirect_thunk_", 21) ||
         !strncmp(name, "__x86_indirect_its_thunk_", 25) || !strncmp(name, "__x86_indirect_jump_thunk_", 26) ||
         !strcmp(name, "__fentry__") || !strcmp(name, "__schedule");
}

/* Symbols the replay needs (thunks, the entry): from /proc/kallsyms, read
 * once (a capture of every system call writes one file per call). */
static void capf_symbols(struct capf_buf *pl, const char *entry_name)
{
  static struct capf_buf fixed;
  static uint32_t nfixed;
  static int have_fixed;
  if (!have_fixed) {
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
      unsigned long long a; char type, name[256];
      if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a || !capf_fixed_symbol(name)) continue;
      uint32_t n = strlen(name);
      capf_u64(&fixed, a);
      capf_u32(&fixed, n);
      capf_put(&fixed, name, n);
      nfixed++;
    }
    if (f) fclose(f);
    have_fixed = 1;
  }
  /* The entry: every text symbol of that name (kjitctl's table). */
  struct capf_buf body = {0};
  uint32_t count = nfixed;
  load_syms();
  if (!capf_fixed_symbol(entry_name))
    for (size_t i = 0; i < nsyms; i++) {
      if (!syms[i].addr || strcmp(syms[i].name, entry_name)) continue;
      uint32_t n = strlen(entry_name);
      capf_u64(&body, syms[i].addr);
      capf_u32(&body, n);
      capf_put(&body, entry_name, n);
      count++;
    }
  capf_u32(pl, count);
  if (fixed.n) capf_put(pl, fixed.p, fixed.n);
  if (body.n) capf_put(pl, body.p, body.n);
  free(body.p);
}

/* Writes invocation [ev, evend) (BEGIN .. END) as a capture file. */
static int capf_write(const char *path, const char *name, const unsigned char *ev, const unsigned char *evend,
                      struct capf_code *codes, size_t ncodes, uint32_t cap_flags, const char *entry_name,
                      int verbose)
{
  const struct kjit_cap_begin *bg = (const void *)ev;
  if (bg->h.type != KJIT_CAP_BEGIN) return -1;
  uint64_t entry_pc = bg->entry_pc, rflags = bg->rflags, gs = bg->gs_base, fs = bg->fs_base;
  uint64_t icount0 = bg->icount;
  uint32_t pid = bg->pid, cpu = bg->cpu;
  uint64_t gpr[16];
  memcpy(gpr, bg->gpr, sizeof gpr);
  struct capf_buf reads = {0}, nondet = {0}, blocks = {0}, resumes = {0}, regions = {0}, tmp = {0}, out = {0};
  uint32_t nreads = 0, nnondet = 0, nblocks = 0, nresumes = 0, end_reason = 0;
  uint64_t icount1 = 0, st_base = 0, st_size = 0, st_from = 0, read_bytes = 0;
  const unsigned char *st_bytes = NULL;
  for (const unsigned char *p = ev; p < evend;) {
    const struct kjit_cap_rec *r = (const void *)p;
    const unsigned char *pl = p + sizeof *r;
    if (r->len < sizeof *r || p + r->len > evend) break;
    /* The file's records are the module's without their header (same
     * layout: uapi/kjit_capture.h). */
    switch (r->type) {
      case KJIT_CAP_STACK: {
        const struct kjit_cap_stack *s = (const void *)r;
        st_base = s->base; st_size = s->size; st_from = s->from; st_bytes = (const void *)(s + 1);
        break;
      }
      case KJIT_CAP_BLOCK:
        capf_put(&blocks, pl, sizeof(struct kjit_capf_block));
        nblocks++;
        break;
      case KJIT_CAP_READ: {
        uint32_t size = ((const struct kjit_cap_read *)r)->size;
        capf_put(&reads, pl, sizeof(struct kjit_capf_read) + size);
        read_bytes += size;
        nreads++;
        break;
      }
      case KJIT_CAP_NONDET:
        capf_put(&nondet, pl, sizeof(struct kjit_capf_nondet));
        nnondet++;
        break;
      case KJIT_CAP_RESUME: {
        struct kjit_capf_resume f;
        memcpy(&f, pl, sizeof f);
        f.reserved = 0;
        capf_put(&resumes, &f, sizeof f);
        nresumes++;
        break;
      }
      case KJIT_CAP_END: {
        const struct kjit_cap_end *e = (const void *)r;
        end_reason = e->reason;
        icount1 = e->icount;
        break;
      }
    }
    p += r->len;
  }
  /* REGIONS: merged code ranges (r-x) and the task stack (rw-). */
  uint32_t nreg = 0;
  struct capf_buf rl = {0};
  for (size_t i = 0; i < ncodes;) {
    uint64_t start = codes[i].pc, end = codes[i].pc + codes[i].len;
    size_t j = i + 1;
    while (j < ncodes && codes[j].pc <= end) {
      if (codes[j].pc + codes[j].len > end) end = codes[j].pc + codes[j].len;
      j++;
    }
    if (st_size && start < st_base + st_size && st_base < end) { i = j; continue; }
    unsigned char *bytes = calloc(1, end - start);
    for (size_t k = i; k < j; k++) memcpy(bytes + (codes[k].pc - start), codes[k].bytes, codes[k].len);
    capf_u64(&rl, start); capf_u64(&rl, end - start); capf_u32(&rl, KJIT_CAPF_PERM_R | KJIT_CAPF_PERM_X);
    capf_u32(&rl, 0);
    capf_put(&rl, bytes, end - start);
    free(bytes);
    nreg++;
    i = j;
  }
  if (st_size) {
    unsigned char *bytes = calloc(1, st_size);
    if (st_from >= st_base && st_from <= st_base + st_size)
      memcpy(bytes + (st_from - st_base), st_bytes, st_base + st_size - st_from);
    /* the stack lies below the code in the address space (vmalloc) */
    struct capf_buf s = {0};
    capf_u64(&s, st_base); capf_u64(&s, st_size); capf_u32(&s, KJIT_CAPF_PERM_R | KJIT_CAPF_PERM_W);
    capf_u32(&s, 0);
    capf_put(&s, bytes, st_size);
    capf_put(&s, rl.p, rl.n);
    free(rl.p);
    rl = s;
    free(bytes);
    nreg++;
  }
  capf_u32(&regions, nreg);
  capf_put(&regions, rl.p, rl.n);
  free(rl.p);

  uint32_t nsec = 0;
  struct capf_buf secs = {0};
  capf_section(&secs, KJIT_CAPF_REGIONS, &regions); nsec++;
  /* REGS: the state before `call entry`: rsp one slot above the return address. */
  tmp.n = 0;
  for (int i = 0; i < 16; i++) capf_u64(&tmp, i == 4 ? gpr[4] + 8 : gpr[i]);
  capf_u64(&tmp, entry_pc); capf_u64(&tmp, rflags); capf_u64(&tmp, gs); capf_u64(&tmp, fs);
  capf_section(&secs, KJIT_CAPF_REGS, &tmp); nsec++;
  tmp.n = 0;
  capf_u64(&tmp, entry_pc); capf_u64(&tmp, CAPF_SENTINEL);
  capf_section(&secs, KJIT_CAPF_ENTRY, &tmp); nsec++;
  tmp.n = 0;
  capf_put(&tmp, name, strlen(name));
  capf_section(&secs, KJIT_CAPF_NAME, &tmp); nsec++;
  struct capf_buf sec = {0};
  capf_u32(&sec, nreads); if (reads.n) capf_put(&sec, reads.p, reads.n);
  capf_section(&secs, KJIT_CAPF_MEMREAD, &sec); nsec++;
  sec.n = 0;
  capf_u32(&sec, nnondet); if (nondet.n) capf_put(&sec, nondet.p, nondet.n);
  capf_section(&secs, KJIT_CAPF_NONDET, &sec); nsec++;
  sec.n = 0;
  capf_u32(&sec, nblocks); if (blocks.n) capf_put(&sec, blocks.p, blocks.n);
  capf_section(&secs, KJIT_CAPF_BLOCKS, &sec); nsec++;
  /* KRESULT: how the invocation ended and the icount tool's counter. */
  sec.n = 0;
  capf_u32(&sec, end_reason); capf_u32(&sec, cap_flags);
  capf_u64(&sec, icount0); capf_u64(&sec, icount1);
  capf_u32(&sec, pid); capf_u32(&sec, cpu);
  capf_section(&secs, KJIT_CAPF_KRESULT, &sec); nsec++;
  sec.n = 0;
  capf_symbols(&sec, entry_name);
  capf_section(&secs, KJIT_CAPF_SYMBOLS, &sec); nsec++;
  /* RESUME only when the invocation slept: files without sleeps stay as
   * before, readable by simulators that do not know the section. */
  if (nresumes) {
    sec.n = 0;
    capf_u32(&sec, nresumes); capf_put(&sec, resumes.p, resumes.n);
    capf_section(&secs, KJIT_CAPF_RESUME, &sec); nsec++;
  }

  capf_put(&out, KJIT_CAPF_MAGIC, 8);
  capf_u32(&out, KJIT_CAPF_VERSION); capf_u32(&out, nsec); capf_u32(&out, 0); capf_u32(&out, 0);
  capf_put(&out, secs.p, secs.n);
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(out.p, 1, out.n, f) == out.n;
  if (f && fclose(f)) ok = 0;
  uint64_t icount = 0;
  for (uint32_t i = 0; i < nblocks; i++) {
    struct kjit_capf_block b;
    memcpy(&b, blocks.p + sizeof b * i, sizeof b);
    icount += b.ninsns;
  }
  if (verbose || !ok)
    printf("%s: %s %zu bytes: %u blocks, %llu insns, %u reads (%llu bytes), %u nondet, %u sleeps, end %s%s\n",
           path, ok ? "wrote" : "FAILED", out.n, nblocks, (unsigned long long)icount, nreads,
           (unsigned long long)read_bytes, nnondet, nresumes,
           end_reason == KJIT_CAP_END_RETURNED ? "returned" : end_reason == KJIT_CAP_END_OVERFLOW ? "overflow"
           : end_reason == KJIT_CAP_END_LEFT_CACHE ? "left-cache" : end_reason == KJIT_CAP_END_STOPPED ? "stopped"
           : end_reason == KJIT_CAP_END_SLEPT ? "slept"
           : "none", (cap_flags & KJIT_CAP_F_CODE_OVERFLOW) ? " (code buffer overflowed)" : "");
  free(reads.p); free(nondet.p); free(blocks.p); free(resumes.p); free(regions.p); free(tmp.p); free(out.p); free(secs.p);
  free(sec.p);
  return ok ? 0 : -1;
}

/* The code buffer's records, sorted by pc (they point into it). */
static struct capf_code *capf_codes(const unsigned char *cob, uint64_t len, size_t *ncodes)
{
  size_t n = 0, capc = 64;
  struct capf_code *codes = malloc(capc * sizeof *codes);
  for (const unsigned char *p = cob; p < cob + len;) {
    const struct kjit_cap_rec *h = (const void *)p;
    if (h->len < sizeof *h || p + h->len > cob + len) break;
    if (h->type == KJIT_CAP_CODE) {
      if (n == capc) codes = realloc(codes, (capc *= 2) * sizeof *codes);
      const struct kjit_cap_code *c = (const void *)h;
      codes[n].pc = c->pc;
      codes[n].len = c->len;
      codes[n].bytes = (const void *)(c + 1);
      n++;
    }
    p += h->len;
  }
  qsort(codes, n, sizeof *codes, capf_code_cmp);
  *ncodes = n;
  return codes;
}

/* Forks CMD held on a pipe: it execs only once the capture is armed and
 * capf_release(*go_w) is called.  own_group: the workload gets its own
 * process group (a timeout kills all of it).  Returns the pid, or -1. */
static pid_t capf_spawn_held(char **cmdv, int *go_w, int own_group)
{
  int go[2];
  if (pipe(go)) { perror("pipe"); return -1; }
  pid_t child = fork();
  if (child < 0) { perror("fork"); return -1; }
  if (child == 0) {
    char c;
    close(go[1]);
    if (own_group) setpgid(0, 0);
    if (read(go[0], &c, 1) != 1) _exit(126);
    close(go[0]);
    execvp(cmdv[0], cmdv);
    perror("exec");
    _exit(127);
  }
  close(go[0]);
  *go_w = go[1];
  return child;
}

static void capf_release(int go_w)
{
  if (write(go_w, "g", 1) != 1) perror("write");
  close(go_w);
}

#include "kjitctl_capture_all.h"

static int cmd_capture(int argc, char **argv)
{
  const char *sys = NULL, *func = NULL, *out = NULL;
  unsigned pid = 0, count = 1, timeout = 30, buf_kb = 0;
  int first_complete = 0;
  char **cmdv = NULL;
  for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--all-syscalls")) return cmd_capture_all(argc, argv);
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--syscall") && i + 1 < argc) sys = argv[++i];
    else if (!strcmp(argv[i], "--func") && i + 1 < argc) func = argv[++i];
    else if (!strcmp(argv[i], "--pid") && i + 1 < argc) pid = strtoul(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--count") && i + 1 < argc) count = strtoul(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = strtoul(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--buf-kb") && i + 1 < argc) buf_kb = strtoul(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--first-complete")) first_complete = 1;
    else if (!strcmp(argv[i], "--")) { cmdv = argv + i + 1; break; }
    else { fprintf(stderr, "kjitctl capture: unexpected %s\n", argv[i]); return 2; }
  }
  if ((!sys == !func) || !out || count < 1) {
    fprintf(stderr, "usage: kjitctl capture --syscall NAME|--func FUNC [--pid P] [--count N] [--timeout S] [--buf-kb KB] -o FILE [-- CMD...]\n");
    return 2;
  }
  char name[KJIT_NAME_MAX];
  if (sys) snprintf(name, sizeof name, "%s%s", strncmp(sys, "__", 2) ? "__x64_sys_" : "", sys);
  else snprintf(name, sizeof name, "%s", func);

  int go_w = -1;
  pid_t child = 0;
  if (cmdv && *cmdv) {
    child = capf_spawn_held(cmdv, &go_w, 0);
    if (child < 0) return 1;
    pid = child;
  }
  struct kjit_ioc_target t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  snprintf(t.name, sizeof t.name, "%s", name);
  int attached = ioctl(fd, KJIT_IOC_ATTACH, &t) == 0;
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
  c.count = count;
  c.buf_kb = buf_kb;   /* 0: the module's default (4 MiB); it rejects > 64 MiB */
  if (ioctl(fd, KJIT_IOC_CAPTURE_START, &c) < 0) {
    fprintf(stderr, "kjitctl capture: start: %s\n", strerror(errno));
    if (child) kill(child, SIGKILL);
    return 1;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  struct kjit_ioc_capture_read r;
  if (child) {
    int st;
    capf_release(go_w);
    waitpid(child, &st, 0);
  } else {
    for (;;) {
      memset(&r, 0, sizeof r);
      r.size = sizeof r;
      if (ioctl(fd, KJIT_IOC_CAPTURE_READ, &r) < 0) break;
      if (r.state == KJIT_CAP_STATE_DONE) break;
      clock_gettime(CLOCK_MONOTONIC, &t1);
      if (t1.tv_sec - t0.tv_sec >= (long)timeout) break;
      usleep(20000);
    }
  }
  ioctl(fd, KJIT_IOC_CAPTURE_STOP, 0);
  memset(&r, 0, sizeof r);
  r.size = sizeof r;
  if (ioctl(fd, KJIT_IOC_CAPTURE_READ, &r) < 0) { perror("kjitctl capture: read"); return 1; }
  unsigned char *evb = malloc(r.event_bytes + 8), *cob = malloc(r.code_bytes + 8);
  r.buf_ptr = (uintptr_t)evb; r.buf_len = r.event_bytes;
  r.code_ptr = (uintptr_t)cob; r.code_len = r.code_bytes;
  if (ioctl(fd, KJIT_IOC_CAPTURE_READ, &r) < 0) { perror("kjitctl capture: read"); return 1; }
  if (attached) ioctl(fd, KJIT_IOC_DETACH, &t);

  size_t ncodes;
  struct capf_code *codes = capf_codes(cob, r.code_bytes, &ncodes);

  /* Invocations: BEGIN ... END. */
  unsigned k = 0;
  unsigned char *begin = NULL;
  unsigned sleeps = 0;
  int rc = 0;
  for (unsigned char *p = evb; p < evb + r.event_bytes;) {
    struct kjit_cap_rec *h = (void *)p;
    if (h->len < sizeof *h || p + h->len > evb + r.event_bytes) break;
    if (h->type == KJIT_CAP_BEGIN) { begin = p; sleeps = 0; }
    if (h->type == KJIT_CAP_RESUME) sleeps++;
    p += h->len;
    if (h->type == KJIT_CAP_END && begin) {
      char path[4096], nm[256];
      if (first_complete) {
        uint32_t why = ((const struct kjit_cap_end *)h)->reason;
        /* A slept invocation replays through its RESUME records; a module
         * that does not write them leaves it unreplayable. */
        if (why != KJIT_CAP_END_RETURNED && !(why == KJIT_CAP_END_SLEPT && sleeps)) {
          printf("invocation skipped: end reason %u\n", why);
          begin = NULL;
          continue;
        }
      }
      k++;
      if (count == 1 || first_complete) snprintf(path, sizeof path, "%s", out);
      else snprintf(path, sizeof path, "%s.%u", out, k);
      snprintf(nm, sizeof nm, "%s#%u", name, k);
      if (capf_write(path, nm, begin, p, codes, ncodes, r.flags, name, 1)) rc = 1;
      begin = NULL;
      if (k == count || first_complete) break;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("capture %s: %u invocation(s) written, events %llu bytes, code %llu bytes (%zu blocks)%s\n", name, k,
         (unsigned long long)r.event_bytes, (unsigned long long)r.code_bytes, ncodes,
         (r.flags & KJIT_CAP_F_OVERFLOW) ? ", OVERFLOW" : "");
  free(evb); free(cob); free(codes);
  if (k == 0) { fprintf(stderr, "kjitctl capture: no invocation of %s was recorded\n", name); return 1; }
  return rc;
}
