// SPDX-License-Identifier: GPL-2.0
/* kjitctl: user-space control of kjit.ko through /dev/kjit (root only), and
 * `kjitctl report` on any machine.  This file is the front door: --help,
 * --version, and the dispatch to cmd_X (X.c) through the list of commands
 * (commands.c).  Symbols come from /proc/kallsyms (name+0xoff).  Built by
 * CMake as a static executable (tools/kjitctl/CMakeLists.txt). */
#include <stdio.h>
#include <string.h>
#include "kjitctl.h"

const char *kjitctl_path = "kjitctl";

/* Every command's usage; 0 on stdout, 2 on stderr. */
static int usage_to(FILE *to)
{
  for (size_t i = 0; i < kjitctl_ncommands; i++)
    fprintf(to, "%s%s", i ? "       " : "usage: ", kjitctl_commands[i].usage);
  fprintf(to,
          "       kjitctl --version | COMMAND --help\n"
          "tools: none icount bbcount calltrace branch_hints lock_contention entry_count callstack branches kcov\n"
          "exit status: 0 ok, 1 kjit or I/O error, 2 usage error (unknown option, missing value or\n"
          "operand: checked before /dev/kjit); record: the workload's status\n"
          "record, capture and report draw a progress line on stderr when it is a terminal\n"
          "see kjitctl(8): man -l docs/kjitctl.8\n");
  return to == stdout ? 0 : 2;
}

int usage(void) { return usage_to(stderr); }

int parse_json_only(int argc, char **argv, const struct option *opts, int *json)
{
  int c;
  *json = 0;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c != opts[0].val) return usage();
    *json = 1;
  }
  return optind < argc ? usage() : 0;
}

static int wants_help(int argc, char **argv)
{
  for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

int main(int argc, char **argv)
{
  kjitctl_path = argv[0];
  if (argc < 2) return usage();
  const char *name = argv[1];
  if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) return usage_to(stdout);
  if (!strcmp(name, "--version") || !strcmp(name, "version")) {
    printf("kjitctl %s (ABI %u)\n", KJIT_VERSION, KJITCTL_ABI);
    return 0;
  }
  const struct kjitctl_command *cmd = find_command(name);
  if (!cmd) {
    fprintf(stderr, "kjitctl: unknown command %s\n", name);
    return usage();
  }
  /* report's help is kjit-report's: it runs with its arguments as given;
   * kcov, which parses its own, has a help of kjitctl's */
  if ((!(cmd->flags & KJITCTL_NO_DEVICE) || cmd->help) && wants_help(argc, argv)) {
    if (cmd->help) return cmd->help(stdout);
    printf("usage: %s", cmd->usage);
    return 0;
  }
  if (cmd->flags & KJITCTL_NO_DEVICE) return cmd->run(argc - 1, argv + 1);
  int bad = check_arguments(cmd, argc - 1, argv + 1);
  if (bad) return bad;
  if (cmd->flags & KJITCTL_LATE_DEVICE) return cmd->run(argc - 1, argv + 1);
  if (cmd->flags & KJITCTL_DEVICE_OPTIONAL) {
    if (open_dev_optional() < 0) return 1;
  } else if (open_dev()) {
    return 1;
  }
  return cmd->run(argc - 1, argv + 1);
}
