// SPDX-License-Identifier: GPL-2.0
#include "gdb_serve.h"

#include <cstdio>
#include <cstdlib>

#include "gdb_command_line.h"
#include "gdb_connection.h"
#include "gdb_replay_target.h"
#include "gdb_stub.h"
#include "replay_cursor.h"
#include "vmlinux_text.h"

namespace kjit::sim {
namespace {

using gdb::PacketReader;

bool is_loopback(const std::string &host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// Serves one gdb on `conn` until the session ends; the process's exit status.
int session(gdb::Connection &conn, gdb::Stub &stub, ReplayCursor &cursor, const Capture &cap) {
  PacketReader::Event ev;
  bool told_exit = false;
  for (;;) {
    if (!conn.next(&ev)) {
      if (stub.exited()) {
        printf("kjit-sim: gdb closed the connection after the invocation's end\n");
        return 0;
      }
      fprintf(stderr, "kjit-sim: gdb went away without detaching (%s), at instruction %llu of %llu\n",
              conn.error().c_str(), static_cast<unsigned long long>(cursor.position()),
              static_cast<unsigned long long>(cursor.end_position()));
      return 1;
    }
    switch (ev.kind) {
      case PacketReader::Event::Kind::kPacket: break;
      case PacketReader::Event::Kind::kBadChecksum:
      case PacketReader::Event::Kind::kMalformed:
        fprintf(stderr, "kjit-sim: bad packet from gdb: %s; asked for it again ('-')\n", ev.text.c_str());
        if (!conn.send_ack(false)) return 1;
        continue;
      case PacketReader::Event::Kind::kOversized:
        fprintf(stderr, "kjit-sim: gdb sent %s (the PacketSize this server offers): not gdb; closing\n",
                ev.text.c_str());
        return 1;
      case PacketReader::Event::Kind::kStray:
        fprintf(stderr, "kjit-sim: ignoring bytes outside a packet: %s\n", ev.text.c_str());
        continue;
      default: continue;  // acknowledgements of nothing; ^C with nothing running
    }
    if (conn.acks() && !conn.send_ack(true)) return 1;
    const gdb::Stub::Reply r = stub.handle(ev.text, [&conn] { return conn.interrupted(); });
    if (!r.complaint.empty()) fprintf(stderr, "kjit-sim: malformed packet from gdb: %s\n", r.complaint.c_str());
    if (conn.gone()) {
      fprintf(stderr, "kjit-sim: gdb went away during '%s' (%s), at instruction %llu of %llu\n",
              ev.text.substr(0, 40).c_str(), conn.error().c_str(), static_cast<unsigned long long>(cursor.position()),
              static_cast<unsigned long long>(cursor.end_position()));
      return 1;
    }
    for (const std::string &p : r.packets)
      if (!conn.send(p)) {
        fprintf(stderr, "kjit-sim: the reply to '%s' did not reach gdb (%s), at instruction %llu of %llu\n",
                ev.text.substr(0, 40).c_str(), conn.error().c_str(),
                static_cast<unsigned long long>(cursor.position()),
                static_cast<unsigned long long>(cursor.end_position()));
        return 1;
      }
    if (stub.exited() && !told_exit) {
      told_exit = true;
      const uint64_t rax = cursor.emulator().gpr(KJIT_REG_RAX);
      printf("kjit-sim: %s returned rax = 0x%llx (%lld): gdb's exit code is its low 32 bits\n", cap.name.c_str(),
             static_cast<unsigned long long>(rax), static_cast<long long>(rax));
      fflush(stdout);
    }
    if (r.no_ack_mode) conn.acks_off();
    if (r.end_session) {
      printf("kjit-sim: gdb %s\n", ev.text[0] == 'D' ? "detached" : "killed the program");
      return 0;
    }
  }
}

}  // namespace

std::string parse_listen_address(const std::string &spec, std::string *host, uint16_t *port) {
  std::string h = "127.0.0.1", p = spec;
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos) {
    h = spec.substr(0, colon);
    p = spec.substr(colon + 1);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (h.empty()) h = "127.0.0.1";  // ":PORT", as gdb's target remote takes it
  }
  char *end = nullptr;
  const unsigned long v = p.empty() || p[0] == '-' ? 70000 : strtoul(p.c_str(), &end, 10);
  if (p.empty() || *end || v > 65535) return "not a port from 0 to 65535: " + p;
  *host = h;
  *port = static_cast<uint16_t>(v);
  return "";
}

int serve_gdb(const std::string &path, const Capture &cap, const ReplayLog &log, const GdbServeOptions &opt) {
  std::string host;
  uint16_t port = 0;
  std::string err = parse_listen_address(opt.address, &host, &port);
  if (!err.empty()) {
    fprintf(stderr, "kjit-sim replay: --gdb %s: %s\n", opt.address.c_str(), err.c_str());
    return 2;
  }
  ReplayCursor cursor;
  ReplayCursor::Options co;
  co.translated = opt.translated;
  co.checkpoint_every = opt.checkpoint_every;
  co.budget = opt.budget;
  co.kallsyms = opt.kallsyms;
  co.quiet = opt.quiet;
  err = cursor.open(cap, log, co);
  if (!err.empty()) {
    fprintf(stderr, "error: %s: %s\n", path.c_str(), err.c_str());
    return 2;
  }
  const RunResult &end = cursor.ending();
  char back[96];
  if (opt.translated)
    snprintf(back, sizeof back, "going back runs the translation again from the start");
  else
    snprintf(back, sizeof back, "%zu checkpoints (%llu KiB) to go back from", cursor.checkpoint_positions().size(),
             static_cast<unsigned long long>(cursor.checkpoint_bytes() >> 10));
  printf("kjit-sim: %s: %s, %llu instructions (%s view), %s; %s\n", path.c_str(), cap.name.c_str(),
         static_cast<unsigned long long>(cursor.end_position()), opt.translated ? "translated" : "original",
         end.reason == StopReason::kSentinel ? "returns" : ("cannot go on at the end: " + end.message).c_str(), back);

  const DebugVmlinux dbg = find_debug_vmlinux(cap, opt.vmlinux);
  const CaptureKaslr kaslr = capture_kaslr(cap);
  VmlinuxText text;
  std::string vmlinux = dbg.path;
  if (!vmlinux.empty()) {
    err = text.open(vmlinux, kaslr.offset);
    if (!err.empty()) {
      fprintf(stderr, "kjit-sim: %s; gdb gets no code beyond the capture's and no symbols\n", err.c_str());
      vmlinux.clear();
    }
  }
  if (!vmlinux.empty()) {
    const VmlinuxText::Agreement a = text.agreement(cap);
    printf("kjit-sim: debug vmlinux %s (%s): %llu of %llu captured code bytes as in the file%s\n", vmlinux.c_str(),
           dbg.note.c_str(), static_cast<unsigned long long>(a.same), static_cast<unsigned long long>(a.compared),
           a.compared && a.same * 10 < a.compared * 8
               ? ": FEW, is it this kernel's? (boot-time patches account for a few percent)"
               : " (the rest: sites the kernel patched at boot)");
  } else {
    printf("kjit-sim: no debug vmlinux: %s\n", dbg.note.c_str());
  }

  gdb::Connection conn;
  err = conn.listen(host, port);
  if (!err.empty()) {
    fprintf(stderr, "kjit-sim replay: --gdb %s: %s\n", opt.address.c_str(), err.c_str());
    return 2;
  }
  if (!is_loopback(host))
    fprintf(stderr, "kjit-sim: listening on %s, not the loopback: whoever reaches it reads the capture\n",
            host.c_str());
  printf("kjit-sim: waiting for gdb on %s:%u\n", host.c_str(), conn.port());
  printf("  %s\n", gdb_command_line(vmlinux, kaslr.offset, host, conn.port()).c_str());
  fflush(stdout);
  std::string peer;
  err = conn.accept(&peer);
  if (!err.empty()) {
    fprintf(stderr, "kjit-sim: %s\n", err.c_str());
    return 2;
  }
  printf("kjit-sim: gdb connected from %s\n", peer.c_str());
  fflush(stdout);
  // The capture's own symbols name only a few functions: monitor names
  // code with the kernel's list (--symbols) or not at all.
  GdbReplayTarget target(cursor, cap, vmlinux.empty() ? nullptr : &text, opt.kallsyms ? &cursor.symbols() : nullptr);
  gdb::Stub stub(target);
  return session(conn, stub, cursor, cap);
}

}  // namespace kjit::sim
