// SPDX-License-Identifier: GPL-2.0
/* The kernel's text symbols, from /proc/kallsyms (read once, sorted by
 * address): addresses shown as name+0xoff, names looked up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kjitctl.h"

struct sym *syms;
size_t nsyms;

static int sym_cmp(const void *a, const void *b)
{
  const struct sym *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void load_syms(void)
{
  if (syms) return;
  FILE *f = fopen(kernel_path("/proc/kallsyms"), "r");
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

const char *symbolize(unsigned long long a, char *buf, size_t len)
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

/* The symbols by name (then address), built on the first lookup by name:
 * a recording of every function asks for each one's address. */
static struct sym **by_name;

static int name_cmp(const void *a, const void *b)
{
  const struct sym *x = *(struct sym *const *)a, *y = *(struct sym *const *)b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
}

/* The lowest-addressed symbol of that name, or NULL. */
static const struct sym *ksym_by_name(const char *name)
{
  load_syms();
  if (!by_name && nsyms) {
    by_name = malloc(nsyms * sizeof *by_name);
    if (!by_name) return NULL;
    for (size_t i = 0; i < nsyms; i++) by_name[i] = &syms[i];
    qsort(by_name, nsyms, sizeof *by_name, name_cmp);
  }
  size_t lo = 0, hi = nsyms;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (strcmp(by_name[mid]->name, name) < 0) lo = mid + 1; else hi = mid;
  }
  return lo < nsyms && !strcmp(by_name[lo]->name, name) ? by_name[lo] : NULL;
}

unsigned long long ksym_addr(const char *name)
{
  const struct sym *s = ksym_by_name(name);
  return s ? s->addr : 0;
}

long sym_index(unsigned long long a)
{
  size_t lo = 0, hi = nsyms;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (syms[mid].addr <= a) lo = mid + 1; else hi = mid;
  }
  return lo ? (long)lo - 1 : -1;
}

int kjit_ksym_exists(const char *name) { return ksym_by_name(name) != NULL; }
