// SPDX-License-Identifier: GPL-2.0
/* kjit.data, the file `kjitctl record` writes (include/uapi/kjit/data_format.h,
 * docs/data-format.md): META and STATS as key=value text, the tool's
 * records, the kernel symbols that hold their addresses, and what kjit
 * answered for each target.  The whole file is assembled in memory and
 * written at once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "kjitctl.h"
#include "uapi/kjit/data_format.h"

struct data_out { struct buf file; uint32_t nsections; };

static void data_section(struct data_out *o, uint32_t type, const struct buf *pl)
{
  static const unsigned char zeros[8];
  buf_u32(&o->file, type);
  buf_u32(&o->file, kjit_capf_section_crc(type, pl->p, pl->n));
  buf_u64(&o->file, pl->n);
  if (pl->n) buf_put(&o->file, pl->p, pl->n);
  if (pl->n % 8) buf_put(&o->file, zeros, 8 - pl->n % 8);
  o->nsections++;
}

static void kv(struct buf *b, const char *k, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void kv(struct buf *b, const char *k, const char *fmt, ...)
{
  char v[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v, sizeof v, fmt, ap);
  va_end(ap);
  for (char *p = v; *p; p++) if (*p == '\n') *p = ' ';   /* one line per key */
  buf_put(b, k, strlen(k));
  buf_put(b, "=", 1);
  buf_put(b, v, strlen(v));
  buf_put(b, "\n", 1);
}

/* Marks the symbols holding `a` (for the SYMBOLS section). */
static void want_sym(unsigned char *want, unsigned long long a)
{
  long i = sym_index(a);
  if (i >= 0 && a - syms[i].addr < 0x100000) want[i] = 1;
}

/* META: where and how the recording was made. */
static void meta_section(struct data_out *o, const struct record_info *in)
{
  struct buf b = {0};
  struct utsname u;
  char bid[129];
  uname(&u);
  note_build_id("/sys/kernel/notes", bid, sizeof bid);   /* the running kernel's */
  kv(&b, "kjit_version", "%s", KJIT_VERSION);
  kv(&b, "kernel_release", "%s", u.release);
  kv(&b, "build_id", "%s", bid);
  /* Every kernel image address in the file is canonical (canonical.c):
   * stext is the link-time _stext, and kaslr_offset says how far this
   * boot moved it. */
  kv(&b, "stext", "0x%llx", canonical_addr(ksym_addr("_stext")));
  kv(&b, "kaslr_offset", "0x%llx", kjit_kaslr_offset);
  kv(&b, "tool", "%s", in->tool);
  {
    struct buf t = {0};
    for (size_t i = 0; i < in->targets->n; i++) {
      if (i) buf_put(&t, " ", 1);
      buf_put(&t, in->targets->v[i], strlen(in->targets->v[i]));
    }
    buf_put(&t, "", 1);
    kv(&b, "targets", "%s", t.p);
    free(t.p);
  }
  kv(&b, "command", "%s", in->command ? in->command : "");
  kv(&b, "pid", "%d", (int)in->pid);
  kv(&b, "filter", "%s", in->filter ? in->filter : "");
  if (in->status_known && WIFEXITED(in->status)) kv(&b, "exit_status", "%d", WEXITSTATUS(in->status));
  if (in->status_known && WIFSIGNALED(in->status)) kv(&b, "exit_signal", "%d", WTERMSIG(in->status));
  kv(&b, "start_ns", "%llu", (unsigned long long)in->t0);
  kv(&b, "duration_ns", "%llu", (unsigned long long)(in->t1 - in->t0));
  kv(&b, "nodename", "%s", u.nodename);
  data_section(o, KJIT_DATA_META, &b);
  free(b.p);
}

/* STATS: how the entries ended, and the tool's scalars. */
static void stats_section(struct data_out *o, const struct kjit_ioc_results *r, const struct kjit_ioc_stats *st)
{
  struct buf b = {0};
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
  kv(&b, "left_nested_entry", "%llu", (unsigned long long)st->left_nested_entry);
  kv(&b, "filtered", "%llu", (unsigned long long)st->filtered);
  /* Every call of the attached functions during the recording. */
  kv(&b, "calls_entered", "%llu", (unsigned long long)st->calls_entered);
  kv(&b, "calls_declined", "%llu", (unsigned long long)st->calls_declined);
  kv(&b, "calls_skipped", "%llu", (unsigned long long)st->calls_skipped);
  kv(&b, "calls_nested", "%llu", (unsigned long long)st->calls_nested);
  kv(&b, "calls_redirected", "%llu", (unsigned long long)st->calls_redirected);
  kv(&b, "calls_filtered", "%llu", (unsigned long long)st->calls_filtered);
  for (int i = 0; i < 8; i++) {
    char k[16];
    snprintf(k, sizeof k, "scalar%d", i);
    kv(&b, k, "%llu", (unsigned long long)r->scalars[i]);
  }
  data_section(o, KJIT_DATA_STATS, &b);
  free(b.p);
}

/* The tool's records: BLOCKS (and BRANCHES), EVENTS or CALLS; the symbols
 * holding their addresses are marked in `want`. */
static void record_sections(struct data_out *o, const struct kjit_ioc_results *r, const struct kjit_ioc_rec *recs,
                            unsigned char *want)
{
  struct buf b = {0};
  uint64_t n = r->nrec;
  if (r->tool == KJIT_TOOL_BBCOUNT || r->tool == KJIT_TOOL_BRANCHES) {
    for (uint64_t i = 0; i < n; i++) {
      if ((recs[i].pid_type & 0xff) == KJIT_REC_BRANCH) continue;
      struct kjit_data_block d = {canonical_addr(recs[i].pc), recs[i].count, (uint32_t)recs[i].sp,
                                  (uint16_t)(recs[i].sp >> 32),
                                  (uint16_t)(recs[i].pid_type & KJIT_REC_BB_FRAGMENT ? KJIT_DATA_BLOCK_FRAGMENT : 0)};
      buf_put(&b, &d, sizeof d);
      want_sym(want, recs[i].pc);
    }
    data_section(o, KJIT_DATA_BLOCKS, &b);
    b.n = 0;
    for (uint64_t i = 0; r->tool == KJIT_TOOL_BRANCHES && i < n; i++) {
      if ((recs[i].pid_type & 0xff) != KJIT_REC_BRANCH) continue;
      uint64_t target = recs[i].pc + (uint64_t)(int64_t)(int32_t)(recs[i].pid_type >> 32);
      struct kjit_data_branch d = {canonical_addr(recs[i].pc), canonical_addr(target), recs[i].count, recs[i].sp};
      buf_put(&b, &d, sizeof d);
      want_sym(want, recs[i].pc);
    }
    if (r->tool == KJIT_TOOL_BRANCHES) data_section(o, KJIT_DATA_BRANCHES, &b);
  } else if (r->tool == KJIT_TOOL_CALLSTACK) {
    for (uint64_t i = 0; i < n; i++) {
      unsigned type = recs[i].pid_type & 0xff;
      if (type < KJIT_DATA_EV_ENTRY || type > KJIT_DATA_EV_RETURN) continue;
      uint8_t flags = (recs[i].pid_type >> 56) & KJIT_REC_INSNS ? KJIT_DATA_EV_INSNS : 0;
      struct kjit_data_event e = {canonical_addr(recs[i].pc), recs[i].sp, recs[i].count,
                                  (uint32_t)(recs[i].pid_type >> 8), (uint16_t)(recs[i].pid_type >> 40),
                                  (uint8_t)type, flags, flags ? recs[i].insns : 0,
                                  flags ? (uint32_t)recs[i].switches : 0, 0};
      buf_put(&b, &e, sizeof e);
      want_sym(want, recs[i].pc);
    }
    data_section(o, KJIT_DATA_EVENTS, &b);
  } else if (r->tool == KJIT_TOOL_ENTRY_COUNT || r->tool == KJIT_TOOL_CALLTRACE) {
    for (uint64_t i = 0; i < n; i++) {
      struct kjit_data_call c = {canonical_addr(recs[i].pc), r->tool == KJIT_TOOL_CALLTRACE ? 1 : recs[i].count};
      buf_put(&b, &c, sizeof c);
      want_sym(want, recs[i].pc);
    }
    data_section(o, KJIT_DATA_CALLS, &b);
  }
  free(b.p);
}

/* SYMBOLS: the marked symbols and those of the targets, each with the
 * distance to the next symbol as its size. */
static void symbols_section(struct data_out *o, const struct record_info *in, unsigned char *want)
{
  static const unsigned char zeros[8];
  struct buf b = {0};
  for (size_t i = 0; i < in->targets->n; i++) want_sym(want, ksym_addr(in->targets->v[i]));
  for (size_t i = 0; i < nsyms; i++) {
    if (!want[i]) continue;
    unsigned long long next = i + 1 < nsyms ? syms[i + 1].addr : syms[i].addr + 1;
    uint64_t size = next - syms[i].addr;
    struct kjit_data_symbol s = {canonical_addr(syms[i].addr), size > 0xffffffffu ? 0xffffffffu : (uint32_t)size,
                                 (uint16_t)strlen(syms[i].name), 't', 0};
    buf_put(&b, &s, sizeof s);
    buf_put(&b, syms[i].name, s.name_len);
    if (s.name_len % 8) buf_put(&b, zeros, 8 - s.name_len % 8);
  }
  data_section(o, KJIT_DATA_SYMBOLS, &b);
  free(b.p);
}

/* MODULES: the loaded modules (modules.c), whose addresses stay the
 * running ones: a report names module code relative to these bases. */
static void modules_section(struct data_out *o)
{
  struct buf b = {0};
  loaded_modules(&b);
  data_section(o, KJIT_DATA_MODULES, &b);
  free(b.p);
}

int record_write(const char *path, const struct record_info *in, const struct kjit_ioc_results *r,
                 const struct kjit_ioc_rec *recs, const struct kjit_ioc_stats *st)
{
  struct data_out o = {{0}, 0};
  load_syms();
  meta_section(&o, in);
  stats_section(&o, r, st);
  unsigned char *want = calloc(nsyms + 1, 1);
  if (!want) return -1;
  record_sections(&o, r, recs, want);
  symbols_section(&o, in, want);
  free(want);
  data_section(&o, KJIT_DATA_TARGETS, in->verdicts);
  modules_section(&o);

  struct buf head = {0};
  buf_put(&head, KJIT_DATA_MAGIC, 8);
  buf_u32(&head, KJIT_DATA_VERSION);
  buf_u32(&head, o.nsections);
  buf_u64(&head, 0);
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(head.p, 1, head.n, f) == head.n && fwrite(o.file.p, 1, o.file.n, f) == o.file.n;
  if (f && fclose(f)) ok = 0;
  free(head.p);
  free(o.file.p);
  return ok ? 0 : -1;
}
