/* SPDX-License-Identifier: GPL-2.0 */
// kjit-sim subcommands: each gets its name (argv[0]) and the arguments
// after it.
#ifndef KJIT_SIM_COMMANDS_H
#define KJIT_SIM_COMMANDS_H

namespace kjit::sim {
int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_kernel_diff(int argc, char **argv);
int cmd_replay(int argc, char **argv);
}  // namespace kjit::sim
#endif
