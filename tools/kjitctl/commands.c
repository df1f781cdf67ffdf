// SPDX-License-Identifier: GPL-2.0
/* The one list of kjitctl's commands: name, function, usage lines and the
 * option table it parses.  `kjitctl --help` prints these usage lines,
 * `kjitctl X --help` its own; tests/kjitctl-help.sh checks that every
 * command and every option of these tables is in both and in the man page
 * (docs/kjitctl.8).  report's options are kjit-report's (tools/report). */
#include <string.h>
#include "kjitctl.h"

const struct kjitctl_command kjitctl_commands[] = {
  {"record", cmd_record,
   "kjitctl record [-t TOOL] [-e TARGETS] [-o kjit.data] [-d SECS] [--tid TID] [--comm NAME]\n"
   "               [--cgroup PATH] [-C CPUS] (-c 'CMD' | -p PID | -a | -- CMD ARGS)\n",
   record_help, record_options, KJITCTL_LATE_DEVICE, "+t:e:o:d:c:p:haC:", 0, -1},
  {"top", cmd_top,
   "kjitctl top [-e TARGETS] [-i SECS] [-n COUNT] [-l LINES] [--blocks] [-p PID | -a]\n"
   "               [--tid TID] [--comm NAME] [--cgroup PATH] [-C CPUS]   live rates, Ctrl-C detaches\n",
   top_help, top_options, KJITCTL_LATE_DEVICE, "+e:i:n:l:p:haC:", 0, 0},
  {"report", cmd_report,
   "kjitctl report [-i kjit.data | --kcov FILE] [--vmlinux PATH] [--format F] [-o FILE]\n"
   "               [--debug-dir DIR]... [--source-root DIR] [--weight calls|time]\n"
   "               [--no-build-id-check]\n"
   "               (host or guest; kjit-report)\n",
   NULL, NULL, KJITCTL_NO_DEVICE},
  {"list", cmd_list,
   "kjitctl list [GLOB...]   attached functions; with GLOBs, attachable ones and why kjit refuses\n"
   "               others; without kjit.ko, the candidates (GLOB default '*')\n",
   NULL, NULL, KJITCTL_DEVICE_OPTIONAL, NULL, 0, -1},
  {"config", cmd_config,
   "kjitctl config [--tool T] [--inline 0|1] [--liveness 0|1] [--cache-kb N]\n"
   "               [--flush-every-entry 0|1] [--pid P] [--max-block-insns N]\n"
   "               re-create the engine (nothing may be attached)\n",
   NULL, config_options, 0, "+", 0, 0},
  {"attach", cmd_attach,
   "kjitctl attach SYSCALL|NR|FUNC|all-syscalls ...\n"
   "       kjitctl attach [--batch N] GLOB... | -f FILE   attachable functions by name,\n"
   "               N a request (default: all in one)\n",
   NULL, attach_options, 0, "f:", 0, -1},
  {"detach", cmd_detach, "kjitctl detach SYSCALL|FUNC|all\n", NULL, NULL, 0, NULL, 1, 1},
  {"stats", cmd_stats, "kjitctl stats   the engine's counters\n", NULL, NULL, 0, NULL, 0, 0},
  {"flush", cmd_flush, "kjitctl flush   drop every translation\n", NULL, NULL, 0, NULL, 0, 0},
  {"reset", cmd_reset, "kjitctl reset   zero the configured tool's results\n", NULL, NULL, 0, NULL, 0, 0},
  {"icount-reset", cmd_reset, "kjitctl icount-reset   the same as reset\n", NULL, NULL, 0, NULL, 0, 0},
  {"show", cmd_show, "kjitctl show [--json|--folded|--trace]   live results of the configured tool\n",
   NULL, show_options, 0, NULL, 0, 0},
  {"blocks", cmd_blocks, "kjitctl blocks [--json]   bbcount's blocks, live\n", NULL, blocks_options, 0, NULL, 0, 0},
  {"calls", cmd_calls, "kjitctl calls [--json]   entry_count's or callstack's calls, live\n",
   NULL, calls_options, 0, NULL, 0, 0},
  {"departures", cmd_departures, "kjitctl departures [--json] [--all]   where entries left the cache\n",
   NULL, departures_options, 0, NULL, 0, 0},
  /* kcov parses its own subcommand and options, then opens the device */
  {"kcov", cmd_kcov,
   "kjitctl kcov enable [--attach TARGET]... [--no-syscalls] [--no-faults]\n"
   "       kjitctl kcov disable   a KCOV device (/sys/kernel/debug/kcov) on this stock kernel,\n"
   "               covering every system call, page faults and the TARGETs\n",
   kcov_help, kcov_options, KJITCTL_NO_DEVICE, NULL, 1, -1},
  {"capture", cmd_capture,
   "kjitctl capture --syscall NAME|--func FUNC [--pid P] [--count N] [--first-complete]\n"
   "                [--timeout S] [--buf-kb KB] -o FILE [-- CMD...]\n"
   "       kjitctl capture --all-syscalls -o DIR [--timeout S] [--buf-kb KB] [--code-kb KB]\n"
   "                [--all-code] [--pid P | -- CMD...]   one complete invocation of every\n"
   "                system call CMD and its children make: DIR/NAME.kjitcap\n",
   NULL, capture_options, 0, "+o:", 0, -1},
};
const size_t kjitctl_ncommands = sizeof kjitctl_commands / sizeof *kjitctl_commands;

const struct kjitctl_command *find_command(const char *name)
{
  for (size_t i = 0; i < kjitctl_ncommands; i++)
    if (!strcmp(kjitctl_commands[i].name, name)) return &kjitctl_commands[i];
  return NULL;
}
