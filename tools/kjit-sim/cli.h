/* SPDX-License-Identifier: GPL-2.0 */
// Reading a subcommand's arguments: getopt_long over them (argv[0] is the
// subcommand's name, so getopt's messages name it), and numbers read
// strictly: "abc", "12x", "-1" or a value past the option's largest are
// errors, never 0.
#ifndef KJIT_SIM_CLI_H
#define KJIT_SIM_CLI_H

#include <getopt.h>

#include <cstdint>
#include <string>

namespace kjit::sim {

// `v`, the value of option `opt` of subcommand `cmd`, as a number from 0 to
// `max` into *out; false after printing why it is not one.
bool cli_number(const char *cmd, const char *opt, const char *v, uint64_t max, uint64_t *out);

// The next option of argv (getopt_long with `table`, GNU argument
// permutation); '?' after getopt printed what was wrong (an unknown option,
// a missing value), -1 at the end.  Resets getopt on the first call of a
// parse (`first`).
int cli_next(int argc, char **argv, const char *shortopts, const option *table, bool first);

// argv's operands after cli_next returned -1: exactly one (a CAPTURE), in
// *out; false after printing what is missing or left over.
bool cli_one_operand(const char *cmd, const char *what, int argc, char **argv, std::string *out);

}  // namespace kjit::sim
#endif
