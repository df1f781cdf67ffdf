// SPDX-License-Identifier: GPL-2.0
#include "cli.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kjit::sim {

bool cli_number(const char *cmd, const char *opt, const char *v, uint64_t max, uint64_t *out) {
  char *end = nullptr;
  errno = 0;
  const unsigned long long x = strtoull(v, &end, 0);
  if (!*v || *end || errno || v[strspn(v, " \t")] == '-' || x > max) {
    fprintf(stderr, "kjit-sim %s: %s %s: not a number from 0 to %llu\n", cmd, opt, v,
            static_cast<unsigned long long>(max));
    return false;
  }
  *out = x;
  return true;
}

int cli_next(int argc, char **argv, const char *shortopts, const option *table, bool first) {
  if (first) optind = 0;  // a full reset of glibc's getopt state
  opterr = 1;
  return getopt_long(argc, argv, shortopts, table, nullptr);
}

bool cli_one_operand(const char *cmd, const char *what, int argc, char **argv, std::string *out) {
  if (optind >= argc) {
    fprintf(stderr, "kjit-sim %s: missing %s\n", cmd, what);
    return false;
  }
  if (optind + 1 < argc) {
    fprintf(stderr, "kjit-sim %s: unexpected argument %s\n", cmd, argv[optind + 1]);
    return false;
  }
  *out = argv[optind];
  return true;
}

}  // namespace kjit::sim
