// SPDX-License-Identifier: GPL-2.0
/* Every command's arguments are checked against its entry in commands.c
 * (getopt_long table, short options, how many operands) before anything
 * else runs, so that an unknown option, an option without its value or a
 * stray operand is a usage error (exit 2) with the command's usage, also
 * where /dev/kjit is missing; and option values that are numbers are read
 * strictly (no "12abc", no "-1" for a size). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kjitctl.h"

static const struct option no_options[] = {{NULL, 0, NULL, 0}};

int command_usage_error(const struct kjitctl_command *cmd)
{
  fprintf(stderr, "usage: %s", cmd->usage);
  fprintf(stderr, "(kjitctl %s --help, kjitctl(8))\n", cmd->name);
  return 2;
}

/* Options whose values are numbers, by long name, with their largest
 * value: read strictly here, before anything else runs, as the command
 * reads them again. */
static const struct { const char *name; unsigned long max; } numeric_options[] = {
  {"cache-kb", UINT32_MAX}, {"inline", 1}, {"liveness", 1}, {"flush-every-entry", 1},
  {"pid", INT32_MAX}, {"max-block-insns", UINT32_MAX},
  {"count", UINT32_MAX}, {"timeout", UINT32_MAX}, {"buf-kb", UINT32_MAX}, {"code-kb", UINT32_MAX},
};

/* The long name of the option getopt_long returned as `c` (index `li`
 * when given in its long form), or NULL when it has none. */
static const char *long_name(const struct option *table, int c, int li)
{
  if (li >= 0) return table[li].name;
  for (const struct option *o = table; o->name; o++)
    if (o->val == c && !o->flag) return o->name;
  return NULL;
}

/* A value that cannot be right for its option: a usage error now. */
static int check_value(const struct kjitctl_command *cmd, const char *name, int c, const char *v)
{
  if (!name || !v) return 0;
  if (!strcmp(name, "tool") && tool_by_name(v) < 0) {
    (void)c;
    if (v[0] >= '0' && v[0] <= '9')
      fprintf(stderr, "kjitctl %s: --tool %s: a tool is named, not numbered (%s); a thread is --tid TID\n",
              cmd->name, v, tool_names_list());
    else
      fprintf(stderr, "kjitctl %s: unknown tool %s (%s)\n", cmd->name, v, tool_names_list());
    return command_usage_error(cmd);
  }
  for (size_t i = 0; i < sizeof numeric_options / sizeof *numeric_options; i++) {
    unsigned x;
    char opt[40];
    snprintf(opt, sizeof opt, "--%s", name);
    if (!strcmp(name, numeric_options[i].name) && option_uint(cmd->name, opt, v, numeric_options[i].max, &x))
      return command_usage_error(cmd);
  }
  return 0;
}

int check_arguments(const struct kjitctl_command *cmd, int argc, char **argv)
{
  /* getopt's own conventions from the command's string ("+": operands end
   * the options), then ':' first so that a missing value is told apart */
  const char *own = cmd->shortopts ? cmd->shortopts : "";
  char optstring[64];
  int in_order = own[0] == '+';
  while (*own == '+' || *own == ':') own++;
  snprintf(optstring, sizeof optstring, "%s:%s", in_order ? "+" : "", own);
  const struct option *table = cmd->options ? cmd->options : no_options;
  int c, li = -1;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, optstring, table, &li)) != -1) {
    if (c == '?') {
      if (optopt) fprintf(stderr, "kjitctl %s: unknown option -%c\n", cmd->name, optopt);
      else fprintf(stderr, "kjitctl %s: unknown option %s\n", cmd->name, argv[optind - 1]);
      return command_usage_error(cmd);
    }
    if (c == ':') {
      const char *opt = argv[optind - 1];
      if (optopt && opt[0] == '-' && opt[1] == '-') fprintf(stderr, "kjitctl %s: %s needs a value\n", cmd->name, opt);
      else if (optopt) fprintf(stderr, "kjitctl %s: -%c needs a value\n", cmd->name, optopt);
      else fprintf(stderr, "kjitctl %s: %s needs a value\n", cmd->name, opt);
      return command_usage_error(cmd);
    }
    int bad = check_value(cmd, long_name(table, c, li), c, optarg);
    li = -1;
    if (bad) return bad;
  }
  int operands = argc - optind;
  if (operands < cmd->min_operands || (cmd->max_operands >= 0 && operands > cmd->max_operands)) {
    if (operands > 0 && cmd->max_operands >= 0 && operands > cmd->max_operands)
      fprintf(stderr, "kjitctl %s: unexpected %s\n", cmd->name, argv[optind + cmd->max_operands]);
    else
      fprintf(stderr, "kjitctl %s: missing operand\n", cmd->name);
    return command_usage_error(cmd);
  }
  optind = 1;   /* the command parses them again, from the start */
  return 0;
}

int option_uint(const char *cmd, const char *opt, const char *v, unsigned long max, unsigned *out)
{
  char *end;
  errno = 0;
  unsigned long x = strtoul(v, &end, 0);
  if (!*v || *end || errno || v[strspn(v, " \t")] == '-' || x > max) {
    fprintf(stderr, "kjitctl %s: %s %s: not a number from 0 to %lu\n", cmd, opt, v, max);
    return 2;
  }
  *out = (unsigned)x;
  return 0;
}
