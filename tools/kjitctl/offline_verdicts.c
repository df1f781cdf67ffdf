// SPDX-License-Identifier: GPL-2.0
/* What kjit would refuse, told without kjit.ko (`kjitctl list` when the
 * module is not loaded): the kernel text areas it never instruments, from
 * /proc/kallsyms (noinstr, kprobes, entry, irqentry and softirqentry text,
 * as the module's kjit_os_may_translate), and the kprobes blacklist when
 * debugfs shows it.  The module knows more (its scheduler functions,
 * another ftrace user on a function, its own code): those are candidates
 * here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kjitctl.h"

static const char *const area_names[][3] = {
  {"__noinstr_text_start", "__noinstr_text_end", "noinstr text"},
  {"__kprobes_text_start", "__kprobes_text_end", "kprobes text"},
  {"__entry_text_start", "__entry_text_end", "entry text"},
  {"__irqentry_text_start", "__irqentry_text_end", "irqentry text"},
  {"__softirqentry_text_start", "__softirqentry_text_end", "softirqentry text"},
};
#define NAREAS (sizeof area_names / sizeof *area_names)

static struct { unsigned long long lo, hi; } areas[NAREAS];
static struct names blacklist;
static int loaded, have_addrs, have_blacklist;

static void load(void)
{
  if (loaded) return;
  loaded = 1;
  load_syms();
  /* kallsyms shows zeros to a reader without CAP_SYSLOG */
  for (size_t i = 0; i < nsyms && !have_addrs; i++) have_addrs = syms[i].addr != 0;
  for (size_t i = 0; i < NAREAS && have_addrs; i++) {
    areas[i].lo = ksym_addr(area_names[i][0]);
    areas[i].hi = ksym_addr(area_names[i][1]);
  }
  FILE *f = fopen(kernel_path("/sys/kernel/debug/kprobes/blacklist"), "r");
  if (!f) return;
  have_blacklist = 1;
  char line[512], name[KJIT_NAME_MAX];
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%*s %127s", name) == 1) names_add_new(&blacklist, name);
  fclose(f);
}

const char *offline_verdict_sources(void)
{
  load();
  return have_addrs && have_blacklist ? "kallsyms' text areas and the kprobes blacklist"
       : have_addrs ? "kallsyms' text areas (the kprobes blacklist is in debugfs, unreadable here)"
       : have_blacklist ? "the kprobes blacklist (kallsyms shows no addresses: not root)"
       : "nothing (kallsyms shows no addresses and debugfs is unreadable: run as root)";
}

const char *offline_refusal(const char *name)
{
  static char why[96];
  load();
  if (names_has(&blacklist, name)) return "never instrumented (kprobes blacklist)";
  unsigned long long a = have_addrs ? ksym_addr(name) : 0;
  if (!a) return NULL;
  for (size_t i = 0; i < NAREAS; i++)
    if (areas[i].lo && a >= areas[i].lo && a < areas[i].hi) {
      snprintf(why, sizeof why, "never instrumented (%s)", area_names[i][2]);
      return why;
    }
  return NULL;
}
