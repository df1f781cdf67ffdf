/* SPDX-License-Identifier: GPL-2.0 */
// gdb's remote protocol, the commands: one packet's payload in, the
// replies out, over a Target (gdb_target.h).  No sockets (gdb_connection.h
// carries the bytes) and no emulator, so it is tested with a fake target.
//
// One process with one thread.  What it answers:
//   qSupported (PacketSize, qXfer:features:read, ReverseStep,
//   ReverseContinue, QStartNoAckMode, swbreak, hwbreak), target.xml,
//   g / p (registers), m (memory; E14 for bytes the target does not know),
//   c s C S vCont, bc bs (reverse), Z0-Z2 / z0-z2, ?, qRcmd (monitor),
//   threads (H, T, qC, qfThreadInfo, qsThreadInfo, qAttached,
//   qThreadExtraInfo), qSymbol, D, k, vKill;
//   G P M X (writes): E01, the replay is read-only;
//   anything else: the empty reply (unsupported).
// A known packet whose arguments do not parse gets E01 and a complaint for
// the server's log.
#ifndef KJIT_SIM_GDB_STUB_H
#define KJIT_SIM_GDB_STUB_H

#include <functional>
#include <string>
#include <vector>

#include "gdb_target.h"

namespace kjit::sim::gdb {

class Stub {
 public:
  struct Reply {
    std::vector<std::string> packets;  // payloads in order (console output before a stop)
    bool no_ack_mode = false;          // acknowledgements end after these are sent
    bool end_session = false;          // detach or kill: the session is over after these
    std::string complaint;             // what was wrong with the packet, for the log
  };

  explicit Stub(Target &target) : target_(target) {}
  Reply handle(const std::string &packet, const std::function<bool()> &interrupted);
  // The program exited (a W reply went out): gdb is done with it.
  bool exited() const { return exited_; }

  // A stop as its reply packets: console lines, then T.., W.. or the
  // replaylog stop.
  std::vector<std::string> stop_packets(const Stop &s);

 private:
  Reply stop_reply(const Stop &s);
  Reply memory(const std::string &args);
  Reply point(bool insert, const std::string &args);
  Reply vcont(const std::string &actions, const std::function<bool()> &interrupted);
  Reply xfer(const std::string &args);
  Reply monitor(const std::string &hex);
  Reply one_register(const std::string &args);

  Target &target_;
  bool exited_ = false;
};

}  // namespace kjit::sim::gdb
#endif
