// SPDX-License-Identifier: GPL-2.0
#include "gdb_connection.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace kjit::sim::gdb {

Connection::~Connection() {
  if (fd_ >= 0) close(fd_);
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::string Connection::listen(const std::string &host, uint16_t port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    return "cannot resolve " + host + ": " + gai_strerror(rc);
  std::string err = "no address for " + host;
  for (addrinfo *a = res; a; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1) != 0) {
      err = "cannot listen on " + host + ":" + service + ": " + strerror(errno);
      close(fd);
      continue;
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len);
    port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port
                                           : reinterpret_cast<sockaddr_in *>(&ss)->sin_port);
    listen_fd_ = fd;
    err.clear();
    break;
  }
  freeaddrinfo(res);
  return err;
}

std::string Connection::accept(std::string *peer) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  do fd_ = ::accept4(listen_fd_, reinterpret_cast<sockaddr *>(&ss), &len, SOCK_CLOEXEC);
  while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) return std::string("accept: ") + strerror(errno);
  close(listen_fd_);  // one gdb per server
  listen_fd_ = -1;
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
  getnameinfo(reinterpret_cast<sockaddr *>(&ss), len, host, sizeof host, serv, sizeof serv,
              NI_NUMERICHOST | NI_NUMERICSERV);
  *peer = std::string(host) + ":" + serv;
  return "";
}

// Reads what the socket has (waiting for something when `wait`) into the
// pending events.  False when gdb closed the connection or it failed.
bool Connection::fill(bool wait) {
  if (gone_) return false;
  if (!wait) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return true;
  }
  char buf[4096];
  ssize_t n;
  do n = recv(fd_, buf, sizeof buf, 0);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    gone_ = true;
    error_ = n == 0 ? "gdb closed the connection" : std::string("the connection failed: ") + strerror(errno);
    return false;
  }
  std::vector<PacketReader::Event> ev;
  reader_.feed(std::string_view(buf, static_cast<size_t>(n)), &ev);
  pending_.insert(pending_.end(), ev.begin(), ev.end());
  return true;
}

bool Connection::send_ack(bool good) {
  const char c = good ? '+' : '-';
  if (::send(fd_, &c, 1, MSG_NOSIGNAL) == 1) return true;
  gone_ = true;
  error_ = std::string("sending to gdb failed: ") + strerror(errno);
  return false;
}

bool Connection::send(const std::string &payload) {
  const std::string f = frame(payload);
  for (int attempt = 0; attempt < 4; attempt++) {
    size_t sent = 0;
    while (sent < f.size()) {
      const ssize_t n = ::send(fd_, f.data() + sent, f.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        gone_ = true;
        error_ = std::string("sending to gdb failed: ") + strerror(errno);
        return false;
      }
      sent += static_cast<size_t>(n);
    }
    if (!acks_) return true;
    // Its acknowledgement comes before anything else gdb sends.
    for (;;) {
      while (pending_.empty())
        if (!fill(true)) return false;
      const PacketReader::Event ev = pending_.front();
      if (ev.kind == PacketReader::Event::Kind::kAck) {
        pending_.pop_front();
        return true;
      }
      if (ev.kind == PacketReader::Event::Kind::kNack) {
        pending_.pop_front();
        break;  // resend
      }
      if (ev.kind == PacketReader::Event::Kind::kStray) {
        pending_.pop_front();
        continue;
      }
      // gdb sent something else first: take it as the acknowledgement.
      return true;
    }
  }
  error_ = "gdb refused the packet '" + payload.substr(0, 40) + "' four times";
  return false;
}

bool Connection::next(PacketReader::Event *ev) {
  while (pending_.empty())
    if (!fill(true)) return false;
  *ev = pending_.front();
  pending_.pop_front();
  return true;
}

bool Connection::interrupted() {
  if (!fill(false)) return true;
  for (auto it = pending_.begin(); it != pending_.end(); ++it)
    if (it->kind == PacketReader::Event::Kind::kInterrupt) {
      pending_.erase(it);
      return true;
    }
  return false;
}

}  // namespace kjit::sim::gdb
