/* SPDX-License-Identifier: GPL-2.0 */
// kjit-sim replay CAPTURE --gdb [HOST:]PORT: the capture's replay served
// to one gdb.  Prepares the replay (a first run to the end, checkpoints),
// finds the debug vmlinux, prints the gdb command line, waits for gdb and
// answers it until the session ends.
//
// One session, then the server exits: 0 when gdb detached, killed the
// program or closed the connection after its exit; 1 when the session
// broke (gdb went away before detaching, or in the middle of a step or a
// continue; a packet longer than the protocol allows; a reply gdb
// refused); 2 when it could not start (the replay, the address).  A bad
// checksum gets '-' and gdb sends the packet again; an unknown packet the
// empty reply; a malformed one E01; each is logged on stderr.
#ifndef KJIT_SIM_GDB_SERVE_H
#define KJIT_SIM_GDB_SERVE_H

#include <cstdint>
#include <string>

#include "capture_file.h"
#include "replay_log.h"
#include "sim_symbols.h"

namespace kjit::sim {

struct GdbServeOptions {
  std::string address;                // [HOST:]PORT
  bool translated = false;            // the engine's code cache, not the original code
  uint64_t checkpoint_every = 1000;   // instructions
  uint64_t budget = 20'000'000;
  std::string vmlinux;                // --vmlinux, else found from the capture's KERNEL section
  const SymbolTable *kallsyms = nullptr;
  bool quiet = true;                  // the engine's log
};

// Splits [HOST:]PORT (HOST: a name, an IPv4 address or a bracketed IPv6
// one; 127.0.0.1 when absent or empty, ":PORT").  "" or what is wrong.
std::string parse_listen_address(const std::string &spec, std::string *host, uint16_t *port);

int serve_gdb(const std::string &path, const Capture &cap, const ReplayLog &log, const GdbServeOptions &opt);

}  // namespace kjit::sim
#endif
