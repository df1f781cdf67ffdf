/* SPDX-License-Identifier: GPL-2.0 */
// The TCP connection to one gdb: listening, accepting, packets out with
// their acknowledgements, events in (gdb_remote.h's reader), and a look
// at the socket while the target runs (^C, or gdb gone).
#ifndef KJIT_SIM_GDB_CONNECTION_H
#define KJIT_SIM_GDB_CONNECTION_H

#include <cstdint>
#include <deque>
#include <string>

#include "gdb_remote.h"

namespace kjit::sim::gdb {

class Connection {
 public:
  Connection() = default;
  ~Connection();
  Connection(const Connection &) = delete;
  Connection &operator=(const Connection &) = delete;

  // Listens on `host` (a numeric address or a name) and `port` (0: any
  // free one, see port()).  "" or an error.
  std::string listen(const std::string &host, uint16_t port);
  uint16_t port() const { return port_; }
  // Waits for gdb.  "" or an error; the peer's address in *peer.
  std::string accept(std::string *peer);

  // Sends one packet and, unless acknowledgements are off, waits for its
  // '+' (a '-' resends it, up to 3 times).  False when gdb is gone
  // (error() says how).
  bool send(const std::string &payload);
  // '+' or '-' for a packet received.
  bool send_ack(bool good);
  void acks_off() { acks_ = false; }
  bool acks() const { return acks_; }

  // The next event from gdb, waiting for it.  False when gdb closed the
  // connection or it failed (error()).
  bool next(PacketReader::Event *ev);
  // While the target runs: true when gdb sent ^C or went away (gone()).
  // Never waits.  Other bytes are kept for next().
  bool interrupted();
  bool gone() const { return gone_; }
  const std::string &error() const { return error_; }

 private:
  bool fill(bool wait);

  int listen_fd_ = -1, fd_ = -1;
  uint16_t port_ = 0;
  bool acks_ = true, gone_ = false;
  PacketReader reader_;
  std::deque<PacketReader::Event> pending_;
  std::string error_;
};

}  // namespace kjit::sim::gdb
#endif
