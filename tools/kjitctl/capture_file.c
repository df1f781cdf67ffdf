// SPDX-License-Identifier: GPL-2.0
/* Capture files (docs/capture-format.md, version 2, for `kjit-sim
 * replay`), the one writer both modes of `kjitctl capture` use: reading
 * the module's capture buffers, finding each invocation in them, and
 * writing one invocation with the code it ran as a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "kjitctl.h"
#include "progress.h"

#define CAPF_SENTINEL 0xfffffffff0000000ull

static void capf_section(struct buf *out, uint32_t type, const struct buf *pl)
{
  buf_u32(out, type);
  buf_u64(out, pl->n);
  buf_u32(out, kjit_capf_section_crc(type, pl->p, pl->n));
  if (pl->n) buf_put(out, pl->p, pl->n);
}

static int capf_code_cmp(const void *a, const void *b)
{
  const struct capf_code *x = a, *y = b;
  return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Whether a kallsyms name is one the replay needs whatever the entry (the
 * thunks the engine treats as transfers, fentry, the scheduler funnel). */
int capf_fixed_symbol(const char *name)
{
  return !strcmp(name, "__x86_return_thunk") || !strncmp(name, "__x86_indirect_thunk_", 21) ||
         !strncmp(name, "__x86_indirect_its_thunk_", 25) || !strncmp(name, "__x86_indirect_jump_thunk_", 26) ||
         !strcmp(name, "__fentry__") || !strcmp(name, "__schedule");
}

/* Symbols the replay needs (thunks, the entry): from /proc/kallsyms, read
 * once (a capture of every system call writes one file per call). */
static void capf_symbols(struct buf *pl, const char *entry_name)
{
  static struct buf fixed;
  static uint32_t nfixed;
  static int have_fixed;
  if (!have_fixed) {
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
      unsigned long long a; char type, name[256];
      if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a || !capf_fixed_symbol(name)) continue;
      uint32_t n = strlen(name);
      buf_u64(&fixed, a);
      buf_u32(&fixed, n);
      buf_put(&fixed, name, n);
      nfixed++;
    }
    if (f) fclose(f);
    have_fixed = 1;
  }
  /* The entry: every text symbol of that name (kjitctl's table). */
  struct buf body = {0};
  uint32_t count = nfixed;
  load_syms();
  if (!capf_fixed_symbol(entry_name))
    for (size_t i = 0; i < nsyms; i++) {
      if (!syms[i].addr || strcmp(syms[i].name, entry_name)) continue;
      uint32_t n = strlen(entry_name);
      buf_u64(&body, syms[i].addr);
      buf_u32(&body, n);
      buf_put(&body, entry_name, n);
      count++;
    }
  buf_u32(pl, count);
  if (fixed.n) buf_put(pl, fixed.p, fixed.n);
  if (body.n) buf_put(pl, body.p, body.n);
  free(body.p);
}

/* Writes invocation [ev, evend) (BEGIN .. END) as a capture file. */
int capf_write(const char *path, const char *name, const unsigned char *ev, const unsigned char *evend,
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
  struct buf reads = {0}, nondet = {0}, blocks = {0}, resumes = {0}, regions = {0}, tmp = {0}, out = {0};
  uint32_t nreads = 0, nnondet = 0, nblocks = 0, nresumes = 0, end_reason = 0;
  uint64_t icount1 = 0, st_base = 0, st_size = 0, st_from = 0, read_bytes = 0;
  const unsigned char *st_bytes = NULL;
  for (const unsigned char *p = ev; p < evend;) {
    const struct kjit_cap_rec *r = (const void *)p;
    const unsigned char *pl = p + sizeof *r;
    if (r->len < sizeof *r || p + r->len > evend) break;
    /* The file's records are the module's without their header (same
     * layout: uapi/kjit/capture_format.h). */
    switch (r->type) {
      case KJIT_CAP_STACK: {
        const struct kjit_cap_stack *s = (const void *)r;
        st_base = s->base; st_size = s->size; st_from = s->from; st_bytes = (const void *)(s + 1);
        break;
      }
      case KJIT_CAP_BLOCK:
        buf_put(&blocks, pl, sizeof(struct kjit_capf_block));
        nblocks++;
        break;
      case KJIT_CAP_READ: {
        uint32_t size = ((const struct kjit_cap_read *)r)->size;
        buf_put(&reads, pl, sizeof(struct kjit_capf_read) + size);
        read_bytes += size;
        nreads++;
        break;
      }
      case KJIT_CAP_NONDET:
        buf_put(&nondet, pl, sizeof(struct kjit_capf_nondet));
        nnondet++;
        break;
      case KJIT_CAP_RESUME: {
        struct kjit_capf_resume f;
        memcpy(&f, pl, sizeof f);
        f.reserved = 0;
        buf_put(&resumes, &f, sizeof f);
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
  struct buf rl = {0};
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
    buf_u64(&rl, start); buf_u64(&rl, end - start); buf_u32(&rl, KJIT_CAPF_PERM_R | KJIT_CAPF_PERM_X);
    buf_u32(&rl, 0);
    buf_put(&rl, bytes, end - start);
    free(bytes);
    nreg++;
    i = j;
  }
  if (st_size) {
    unsigned char *bytes = calloc(1, st_size);
    if (st_from >= st_base && st_from <= st_base + st_size)
      memcpy(bytes + (st_from - st_base), st_bytes, st_base + st_size - st_from);
    /* the stack lies below the code in the address space (vmalloc) */
    struct buf s = {0};
    buf_u64(&s, st_base); buf_u64(&s, st_size); buf_u32(&s, KJIT_CAPF_PERM_R | KJIT_CAPF_PERM_W);
    buf_u32(&s, 0);
    buf_put(&s, bytes, st_size);
    buf_put(&s, rl.p, rl.n);
    free(rl.p);
    rl = s;
    free(bytes);
    nreg++;
  }
  buf_u32(&regions, nreg);
  buf_put(&regions, rl.p, rl.n);
  free(rl.p);

  uint32_t nsec = 0;
  struct buf secs = {0};
  capf_section(&secs, KJIT_CAPF_REGIONS, &regions); nsec++;
  /* REGS: the state before `call entry`: rsp one slot above the return address. */
  tmp.n = 0;
  for (int i = 0; i < 16; i++) buf_u64(&tmp, i == 4 ? gpr[4] + 8 : gpr[i]);
  buf_u64(&tmp, entry_pc); buf_u64(&tmp, rflags); buf_u64(&tmp, gs); buf_u64(&tmp, fs);
  capf_section(&secs, KJIT_CAPF_REGS, &tmp); nsec++;
  tmp.n = 0;
  buf_u64(&tmp, entry_pc); buf_u64(&tmp, CAPF_SENTINEL);
  capf_section(&secs, KJIT_CAPF_ENTRY, &tmp); nsec++;
  tmp.n = 0;
  buf_put(&tmp, name, strlen(name));
  capf_section(&secs, KJIT_CAPF_NAME, &tmp); nsec++;
  {
    unsigned long long lo, hi;
    kernel_image_range(&lo, &hi);
    tmp.n = 0;
    buf_u64(&tmp, kjit_kaslr_offset); buf_u64(&tmp, lo); buf_u64(&tmp, hi);
    capf_section(&secs, KJIT_CAPF_KASLR, &tmp); nsec++;
  }
  {
    /* Which kernel: kjit-sim finds its debug vmlinux by these. */
    struct utsname u;
    char bid[129] = "";
    uname(&u);
    note_build_id("/sys/kernel/notes", bid, sizeof bid);
    tmp.n = 0;
    buf_u32(&tmp, (uint32_t)strlen(u.release)); buf_put(&tmp, u.release, strlen(u.release));
    buf_u32(&tmp, (uint32_t)strlen(bid)); buf_put(&tmp, bid, strlen(bid));
    capf_section(&secs, KJIT_CAPF_KERNEL, &tmp); nsec++;
  }
  struct buf sec = {0};
  buf_u32(&sec, nreads); if (reads.n) buf_put(&sec, reads.p, reads.n);
  capf_section(&secs, KJIT_CAPF_MEMREAD, &sec); nsec++;
  sec.n = 0;
  buf_u32(&sec, nnondet); if (nondet.n) buf_put(&sec, nondet.p, nondet.n);
  capf_section(&secs, KJIT_CAPF_NONDET, &sec); nsec++;
  sec.n = 0;
  buf_u32(&sec, nblocks); if (blocks.n) buf_put(&sec, blocks.p, blocks.n);
  capf_section(&secs, KJIT_CAPF_BLOCKS, &sec); nsec++;
  /* KRESULT: how the invocation ended and the icount tool's counter. */
  sec.n = 0;
  buf_u32(&sec, end_reason); buf_u32(&sec, cap_flags);
  buf_u64(&sec, icount0); buf_u64(&sec, icount1);
  buf_u32(&sec, pid); buf_u32(&sec, cpu);
  capf_section(&secs, KJIT_CAPF_KRESULT, &sec); nsec++;
  sec.n = 0;
  capf_symbols(&sec, entry_name);
  capf_section(&secs, KJIT_CAPF_SYMBOLS, &sec); nsec++;
  /* RESUME only when the invocation slept: files without sleeps stay as
   * before, readable by simulators that do not know the section. */
  if (nresumes) {
    sec.n = 0;
    buf_u32(&sec, nresumes); buf_put(&sec, resumes.p, resumes.n);
    capf_section(&secs, KJIT_CAPF_RESUME, &sec); nsec++;
  }

  buf_put(&out, KJIT_CAPF_MAGIC, 8);
  buf_u32(&out, KJIT_CAPF_VERSION); buf_u32(&out, nsec); buf_u32(&out, 0); buf_u32(&out, 0);
  buf_put(&out, secs.p, secs.n);
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
struct capf_code *capf_codes(const unsigned char *cob, uint64_t len, size_t *ncodes)
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

/* The next invocation from *pos: BEGIN .. END, with the RESUME records
 * counted since its BEGIN; an END without a BEGIN is skipped.  0 at the
 * end of the buffer (or at a malformed record). */
int capf_next_invocation(const unsigned char **pos, const unsigned char *evend, struct capf_invocation *inv)
{
  const unsigned char *begin = NULL;
  unsigned sleeps = 0;
  for (const unsigned char *p = *pos; p < evend;) {
    const struct kjit_cap_rec *h = (const void *)p;
    if (h->len < sizeof *h || p + h->len > evend) break;
    if (h->type == KJIT_CAP_BEGIN) { begin = p; sleeps = 0; }
    if (h->type == KJIT_CAP_RESUME) sleeps++;
    p += h->len;
    if (h->type == KJIT_CAP_END && begin) {
      inv->begin = begin;
      inv->end = p;
      inv->end_reason = ((const struct kjit_cap_end *)h)->reason;
      inv->sleeps = sleeps;
      *pos = p;
      return 1;
    }
  }
  *pos = evend;
  return 0;
}

/* Polls the armed capture until the module says it is done or timeout_s
 * seconds passed. */
void capture_wait_done(unsigned timeout_s)
{
  struct kjit_ioc_capture_read r;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    if (ioctl(kjit_fd, KJIT_IOC_CAPTURE_READ, &r) < 0 || r.state == KJIT_CAP_STATE_DONE) break;
    progress_update("%u invocations captured, %llu KiB of events", r.ncaptured,
                    (unsigned long long)r.event_bytes / 1024);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (t1.tv_sec - t0.tv_sec >= (long)timeout_s) break;
    usleep(20000);
  }
}

/* Copies the stopped capture's event and code buffers out of the module
 * (their sizes in *r); -1 after a message. */
int capture_read(struct kjit_ioc_capture_read *r, unsigned char **evb, unsigned char **cob)
{
  *evb = *cob = NULL;
  memset(r, 0, sizeof *r);
  r->size = sizeof *r;
  if (ioctl(kjit_fd, KJIT_IOC_CAPTURE_READ, r) < 0) { perror("kjitctl capture: read"); return -1; }
  *evb = malloc(r->event_bytes + 8);
  *cob = malloc(r->code_bytes + 8);
  r->buf_ptr = (uintptr_t)*evb; r->buf_len = r->event_bytes;
  r->code_ptr = (uintptr_t)*cob; r->code_len = r->code_bytes;
  if (ioctl(kjit_fd, KJIT_IOC_CAPTURE_READ, r) < 0) { perror("kjitctl capture: read"); return -1; }
  return 0;
}
