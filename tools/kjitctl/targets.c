// SPDX-License-Identifier: GPL-2.0
/* TARGETS of `record`, `attach` and `list`: system call names, function
 * names and globs, expanded against the functions ftrace can attach
 * (tracefs available_filter_functions), with kjit's own verdict on each
 * (KJIT_IOC_CHECK_MANY); and every system call attached at once. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

/* The attachable functions of the kernel and its loaded modules, sorted,
 * each once (static functions of one name appear once per copy in tracefs;
 * a module's are listed as "name [mod]": kjit attaches them by name, as
 * kallsyms_lookup_name finds module symbols). */
const struct names *attachable(void)
{
  static struct names all;
  static int loaded;
  if (loaded) return &all;
  loaded = 1;
  FILE *f = NULL;
  for (unsigned i = 0; i < 2 && !f; i++) f = fopen(kernel_path(filter_functions_paths[i]), "r");
  if (!f) {
    fprintf(stderr, "kjitctl: cannot read available_filter_functions (%s); mount tracefs:"
                    " mount -t tracefs nodev /sys/kernel/tracing\n", strerror(errno));
    return &all;
  }
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char name[KJIT_NAME_MAX];
    if (sscanf(line, "%127s", name) != 1) continue;
    names_add(&all, name);
  }
  fclose(f);
  /* tracefs names each address once: a system call wrapper that shares
   * its address with another name (SYSCALL_DEFINE0's __x64_sys_getppid and
   * __do_sys_getppid) is listed under the other.  The wrappers come from
   * kallsyms; kjit checks each when attaching. */
  load_syms();
  for (size_t i = 0; i < nsyms; i++)
    if (!strncmp(syms[i].name, "__x64_sys_", 10)) names_add(&all, syms[i].name);
  names_uniq(&all);
  return &all;
}

static int is_attachable(const char *name) { return names_has(attachable(), name); }

int is_glob(const char *t) { return strpbrk(t, "*?[") != NULL; }

/* Edit distance, bounded: enough for a did-you-mean. */
static unsigned edit_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return 99;
  unsigned d[65][65];
  for (size_t i = 0; i <= la; i++) d[i][0] = i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      unsigned sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      unsigned del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
      d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
  return d[la][lb];
}

/* The closest attachable name (a system call spelled without its prefix
 * is compared without it), or NULL when nothing is close. */
static const char *did_you_mean(const char *t)
{
  const struct names *a = attachable();
  const char *best = NULL;
  unsigned bd = 4;
  for (size_t i = 0; i < a->n; i++) {
    const char *n = a->v[i];
    if (!strncmp(n, "__x64_sys_", 10) && strncmp(t, "__x64_sys_", 10)) n += 10;
    if (abs((int)strlen(n) - (int)strlen(t)) >= (int)bd) continue;
    unsigned d = edit_distance(t, n);
    if (d < bd) { bd = d; best = n; }
  }
  return best;
}

/* Appends the functions TARGET names to `out`: a system call name
 * (openat: __x64_sys_openat), a function name, or a glob over function
 * names ('vfs_*'; a glob that matches no function is tried as a system
 * call glob, 'open*' -> '__x64_sys_open*').  0, or 1 after a message. */
int expand_target(const char *t, struct names *out)
{
  const struct names *a = attachable();
  char buf[KJIT_NAME_MAX + 16];
  if (!a->n) return 1;
  if (!is_glob(t)) {
    snprintf(buf, sizeof buf, "__x64_sys_%s", t);
    if (strncmp(t, "__x64_sys_", 10) && is_attachable(buf)) {
      names_add_new(out, buf);
      return 0;
    }
    if (is_attachable(t)) {
      names_add_new(out, t);
      return 0;
    }
    const char *m = did_you_mean(t);
    if (kjit_ksym_exists(t))
      fprintf(stderr, "kjitctl: %s: a kernel function ftrace cannot attach (notrace, inline or"
                      " without an fentry site)\n", t);
    else
      fprintf(stderr, "kjitctl: %s: no such system call or attachable function%s%s%s\n", t,
              m ? " (did you mean " : "", m ? m : "", m ? "?)" : "");
    return 1;
  }
  size_t before = out->n;
  for (int pass = 0; pass < 2 && out->n == before; pass++) {
    const char *g = t;
    if (pass) { snprintf(buf, sizeof buf, "__x64_sys_%s", t); g = buf; }
    for (size_t i = 0; i < a->n; i++)
      if (!fnmatch(g, a->v[i], 0)) names_add_new(out, a->v[i]);
  }
  if (out->n == before) {
    fprintf(stderr, "kjitctl: '%s' matches no attachable function or system call\n", t);
    return 1;
  }
  return 0;
}

/* Why kjit refuses a function (an -errno of KJIT_IOC_ATTACH/CHECK_MANY). */
const char *const filter_functions_paths[2] = {"/sys/kernel/tracing/available_filter_functions",
                                               "/sys/kernel/debug/tracing/available_filter_functions"};

const char *refusal(int err)
{
  switch (err) {
    case EPERM: return "never instrumented (noinstr, entry code, kprobes blacklist or scheduler)";
    case EINVAL: return "no fentry site";
    case EBUSY: return "kjit's own parking function, or another ftrace user modifies its ip";
    case EEXIST: return "already attached";
    case ENOENT: return "not in the kernel's symbol table";
    case ENOSPC: return "kjit's attachment table is full";
    case EAGAIN: return "its module is being loaded or unloaded";
    default: return strerror(err);
  }
}

const char *attach_refusal(int err)
{
  return err == EPERM ? " (never instrumented: noinstr/entry/kprobes blacklist/scheduler)"
       : err == EINVAL ? " (no fentry site, or not a valid name)"
       : err == EBUSY ? " (another ftrace user modifies this function's ip)"
       : err == EAGAIN ? " (its module is being loaded or unloaded)" : "";
}

/* Asks kjit about each name: res[i] = 0 or -errno. */
int check_names(const struct names *s, int32_t *res)
{
  for (size_t off = 0; off < s->n; off += 65536) {
    size_t n = s->n - off < 65536 ? s->n - off : 65536;
    char *buf = calloc(n, KJIT_NAME_MAX);
    if (!buf) return -1;
    for (size_t i = 0; i < n; i++) snprintf(buf + i * KJIT_NAME_MAX, KJIT_NAME_MAX, "%s", s->v[off + i]);
    struct kjit_ioc_attach_many m = {sizeof m, (uint32_t)n, (uint64_t)(uintptr_t)buf,
                                     (uint64_t)(uintptr_t)(res + off)};
    int r = ioctl(kjit_fd, KJIT_IOC_CHECK_MANY, &m);
    free(buf);
    if (r < 0) return -1;
  }
  return 0;
}

/* Appends the names in FILE (one a line, "-": stdin; blank lines and
 * '#' comments skipped); 0, or 1 after a message. */
int names_from_file(const char *path, struct names *out)
{
  FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
  if (!f) { fprintf(stderr, "kjitctl: %s: %s\n", path, strerror(errno)); return 1; }
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char name[KJIT_NAME_MAX];
    if (sscanf(line, "%127s", name) != 1 || name[0] == '#') continue;
    names_add(out, name);
  }
  if (f != stdin) fclose(f);
  return 0;
}

/* Appends the attachable functions GLOB matches (as `kjitctl list GLOB`
 * shows them); 0, or 1 when it matches none. */
int names_from_glob(const char *glob, struct names *out)
{
  const struct names *a = attachable();
  size_t before = out->n;
  for (size_t i = 0; i < a->n; i++)
    if (!fnmatch(glob, a->v[i], 0)) names_add(out, a->v[i]);
  if (out->n > before) return 0;
  fprintf(stderr, "kjitctl: '%s' matches no attachable function\n", glob);
  return 1;
}

static int name_in(const char *name, const char *const *list)
{
  for (; list && *list; list++)
    if (!strcmp(name, *list)) return 1;
  return 0;
}

/* Attaches every __x64_sys_* but those `except` names (a NULL-terminated
 * list, or NULL) in one ftrace update.  With `attached`, the names it
 * attached (not those attached before) are returned there as *nattached
 * KJIT_NAME_MAX-byte slots, and the skipped ones are only counted. */
int attach_syscalls(char **attached, size_t *nattached, const char *const *except)
{
  load_syms();
  size_t n = 0;
  char *names = NULL;
  for (size_t i = 0; i < nsyms; i++) {
    if (strncmp(syms[i].name, "__x64_sys_", 10)) continue;
    if (i && !strcmp(syms[i].name, syms[i - 1].name)) continue;
    if (name_in(syms[i].name, except)) continue;
    names = realloc(names, (n + 1) * KJIT_NAME_MAX);
    memset(names + n * KJIT_NAME_MAX, 0, KJIT_NAME_MAX);
    snprintf(names + n * KJIT_NAME_MAX, KJIT_NAME_MAX, "%s", syms[i].name);
    n++;
  }
  if (!n) { fprintf(stderr, "kjitctl: no __x64_sys_* in /proc/kallsyms\n"); return 1; }
  int32_t *res = calloc(n, sizeof *res);
  struct kjit_ioc_attach_many m = {sizeof m, (uint32_t)n, (uint64_t)(uintptr_t)names,
                                   (uint64_t)(uintptr_t)res};
  int r = ioctl(kjit_fd, KJIT_IOC_ATTACH_MANY, &m);
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

int attach_all_syscalls(void) { return attach_syscalls(NULL, NULL, NULL); }
