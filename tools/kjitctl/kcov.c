// SPDX-License-Identifier: GPL-2.0
/* kjitctl kcov enable: the kcov tool (which creates /sys/kernel/debug/kcov) on
 * an attach set, entered only by threads that enabled coverage; kjitctl kcov
 * disable: detach, tool none.  The device stays: a client that enables
 * coverage meanwhile gets none until the next enable.
 *
 * The attach set is what a fuzzer's programs reach in their own task: every
 * system call, and handle_mm_fault (user page faults reach it from noinstr
 * entry code: attached, it is covered from there down, as the real KCOV
 * covers it).  --no-syscalls and --no-faults drop those; --attach TARGET
 * adds system calls, functions or globs, expanded as `kjitctl list` does.
 * The options are parsed before /dev/kjit is opened, so that a usage error
 * is one on any machine (the kjit-kcov systemd unit passes them from
 * /etc/default/kjit-kcov). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "kjitctl.h"

enum { OPT_ATTACH = 256, OPT_NO_SYSCALLS, OPT_NO_FAULTS };
const struct option kcov_options[] = {
  {"attach", required_argument, NULL, OPT_ATTACH},
  {"no-syscalls", no_argument, NULL, OPT_NO_SYSCALLS},
  {"no-faults", no_argument, NULL, OPT_NO_FAULTS},
  {NULL, 0, NULL, 0}};

struct kcov_set {
  int syscalls, faults;
  char **targets;   /* --attach's, in order */
  int ntargets;
};

int kcov_help(FILE *to)
{
  fprintf(to,
          "usage: kjitctl kcov enable [--attach TARGET]... [--no-syscalls] [--no-faults]\n"
          "       kjitctl kcov disable\n"
          "enable: /sys/kernel/debug/kcov (the KCOV ABI of kcov.rst) covering the attach set:\n"
          "  every system call and handle_mm_fault (user page faults), by default\n"
          "  --attach TARGET   also a system call, function or glob ('tcp_*'), as `kjitctl list`\n"
          "                    shows them; repeatable; one kjit refuses fails the enable\n"
          "  --no-syscalls     without the system calls\n"
          "  --no-faults       without handle_mm_fault\n"
          "disable: detach everything, no tool; the device stays until kjit.ko is unloaded.\n"
          "At boot: systemctl enable kjit-kcov (options in /etc/default/kjit-kcov).\n");
  return to == stdout ? 0 : 2;
}

static int kcov_disable(void)
{
  struct kjit_ioc_config c = {.size = sizeof c, .inline_instrumentation = 1, .use_liveness = 1};
  struct kjit_ioc_target all = {.size = sizeof all, .name = "*"};
  if (ioctl(kjit_fd, KJIT_IOC_DETACH, &all) < 0 || ioctl(kjit_fd, KJIT_IOC_CONFIG, &c) < 0) {
    perror("kjitctl kcov disable");
    return 1;
  }
  return 0;
}

/* The --attach targets as attachable names; the system calls among them
 * are left out when every system call is attached anyway.  0, or 1 after
 * a message (before anything is configured). */
static int expand_targets(const struct kcov_set *set, struct names *out)
{
  struct names *all = names_new();
  int rc = 0;
  if (!all) return 1;
  for (int i = 0; i < set->ntargets; i++) rc |= expand_target(set->targets[i], all);
  for (size_t i = 0; i < all->n; i++)
    if (!set->syscalls || strncmp(all->v[i], "__x64_sys_", 10)) names_add(out, all->v[i]);
  return rc;
}

static int kcov_enable(const struct kcov_set *set)
{
  struct names *extra = names_new();
  if (!extra || expand_targets(set, extra)) return 1;
  struct kjit_ioc_config c = {.size = sizeof c, .tool = KJIT_TOOL_KCOV, .inline_instrumentation = 1,
                              .use_liveness = 1};
  if (ioctl(kjit_fd, KJIT_IOC_CONFIG, &c) < 0) {
    fprintf(stderr, "kjitctl kcov: configure: %s%s\n", strerror(errno),
            errno == EBUSY ? " (something is attached: `kjitctl detach all`)"
            : errno == EEXIST ? " (the kernel has its own KCOV)" : "");
    return 1;
  }
  /* Half an attach set would give a fuzzer coverage that silently lacks
   * what it asked for: any failure undoes the enable. */
  if (set->syscalls && attach_all_syscalls()) goto undo;
  int faults = 0;
  if (set->faults) {
    struct kjit_ioc_target pf = {.size = sizeof pf, .name = "handle_mm_fault"};
    if (ioctl(kjit_fd, KJIT_IOC_ATTACH, &pf) < 0)
      fprintf(stderr, "kjitctl kcov: page faults not covered: attach handle_mm_fault: %s\n", strerror(errno));
    else
      faults = 1;
  }
  size_t nextra = extra->n;
  if (nextra && attach_bulk(extra, 0)) goto undo;
  /* "A", "A and B", "A, B and C" */
  char extras[64];
  snprintf(extras, sizeof extras, "%zu functions of --attach", nextra);
  const char *parts[3];
  int n = 0;
  if (set->syscalls) parts[n++] = "every attached system call";
  if (faults) parts[n++] = "handle_mm_fault";
  if (nextra) parts[n++] = extras;
  if (!n) goto undo;   /* handle_mm_fault alone was asked for */
  printf("kcov: /sys/kernel/debug/kcov covers");
  for (int i = 0; i < n; i++) printf("%s%s", i == 0 ? " " : i == n - 1 ? " and " : ", ", parts[i]);
  printf("\n");
  return 0;
undo:
  fprintf(stderr, "kjitctl kcov enable: undone (kjitctl kcov disable)\n");
  kcov_disable();
  return 1;
}

int cmd_kcov(int argc, char **argv)
{
  struct kcov_set set = {.syscalls = 1, .faults = 1, .targets = calloc((size_t)argc, sizeof(char *))};
  int c;
  if (!set.targets) return 1;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":", kcov_options, NULL)) != -1) {
    switch (c) {
      case OPT_ATTACH: set.targets[set.ntargets++] = optarg; break;
      case OPT_NO_SYSCALLS: set.syscalls = 0; break;
      case OPT_NO_FAULTS: set.faults = 0; break;
      default:
        fprintf(stderr, "kjitctl kcov: %s %s\n", c == ':' ? "missing the argument of" : "unknown option",
                argv[optind - 1]);
        return usage();
    }
  }
  if (optind != argc - 1) return usage();
  const char *what = argv[optind];
  int enable = !strcmp(what, "enable");
  if (!enable && strcmp(what, "disable")) return usage();
  if (!enable && (set.ntargets || !set.syscalls || !set.faults)) {
    fprintf(stderr, "kjitctl kcov disable takes no options\n");
    return usage();
  }
  if (enable && !set.syscalls && !set.faults && !set.ntargets) {
    fprintf(stderr, "kjitctl kcov enable: an empty attach set (--no-syscalls --no-faults and no --attach)\n");
    return usage();
  }
  /* The device lives in debugfs, which lockdown closes to anything with
   * ioctl or mmap, as it closes the kernel's own KCOV: enabling it would
   * only make the fuzzer's executor fail later. */
  char mode[64];
  if (enable && kernel_lockdown(mode, sizeof mode)) {
    fprintf(stderr, "kjitctl kcov enable: kernel lockdown is on (%s): debugfs refuses to open"
                    " /sys/kernel/debug/kcov (ioctl, mmap), as it refuses the kernel's own KCOV;"
                    " KCOV needs lockdown off (lockdown=none, or Secure Boot off)\n", mode);
    return 1;
  }
  if (open_dev()) return 1;
  return enable ? kcov_enable(&set) : kcov_disable();
}
