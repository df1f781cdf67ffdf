#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""kjit-sim replay --gdb against clients that are not a well-behaved gdb,
over a raw socket:
  a bad checksum gets '-' and the packet sent again gets its reply;
  an unknown packet the empty reply, a malformed one E01, memory the
    replay does not know E14, a write E01; bytes outside packets are
    ignored; after all that the server still answers;
  a packet longer than the PacketSize it offers ends the session: exit 1,
    a message naming it, no crash;
  a client that sends a step (and a continue) and goes away before the
    reply: exit 1, a message that gdb went away, no crash.
  during a long continue (a made-up loop of 4 million instructions,
    tests/sim/loop_capture.py), ^C stops it with SIGINT and the session
    goes on; a client that goes away then is seen while it runs.
And a replay that cannot go on (FAILING: a capture whose log lacks a
record, tests/data/captures-unlogged): continue stops with SIGSEGV where it
fails, the reason on the console; it can go back from there.
Usage: gdb_bad_clients.py KJIT_SIM CAPTURE FAILING
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

import loop_capture

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)
    return cond


def frame(payload):
    return b"$" + payload + b"#" + b"%02x" % (sum(payload) % 256)


class Server:
    def __init__(self, sim, capture):
        self.p = subprocess.Popen([sim, "replay", capture, "--gdb", "127.0.0.1:0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.port = None
        for line in self.p.stdout:
            m = re.match(rb"kjit-sim: waiting for gdb on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        self.s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        self.buf = b""

    def recv_some(self):
        data = self.s.recv(65536)
        if not data:
            raise EOFError("the server closed the connection")
        self.buf += data

    def expect_ack(self):
        while not self.buf:
            self.recv_some()
        c, self.buf = self.buf[:1], self.buf[1:]
        return c

    def reply(self):
        """The next packet's payload, acknowledged."""
        while True:
            m = re.match(rb"\+*\$([^#]*)#([0-9a-f]{2})", self.buf, re.S)
            if m:
                self.buf = self.buf[m.end():]
                self.s.sendall(b"+")
                return m.group(1)
            self.recv_some()

    def ask(self, payload):
        self.s.sendall(frame(payload))
        ack = self.expect_ack()
        return ack, self.reply()

    def finish(self):
        try:
            self.s.close()
        except OSError:
            pass
        try:
            out, err = self.p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            err += b"\n(killed: it did not exit)"
        return self.p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def no_crash(rc, err, what):
    check(rc is not None and 0 <= rc < 128 and "Segmentation" not in err and "Aborted" not in err,
          what + ": no crash (status %s)" % rc)


def malformed_then_oversized(sim, capture):
    srv = Server(sim, capture)
    check(srv.port is not None, "the server listens on a port it prints")
    # A bad checksum: '-', and the server reads on.
    srv.s.sendall(b"$qSupported#00")
    check(srv.expect_ack() == b"-", "a bad checksum gets '-'")
    srv.s.sendall(b"$g#zz")
    check(srv.expect_ack() == b"-", "a checksum that is not hex gets '-'")
    ack, r = srv.ask(b"qSupported:swbreak+;hwbreak+")
    check(ack == b"+" and b"PacketSize=4000" in r and b"ReverseStep+" in r and b"ReverseContinue+" in r,
          "sent again, qSupported gets its reply: " + r.decode()[:60])
    check(srv.ask(b"vBogusPacket")[1] == b"", "an unknown packet gets the empty reply")
    check(srv.ask(b"qXfer:features:read:target.xml:zz")[1] == b"E01", "a malformed qXfer gets E01")
    check(srv.ask(b"mnot-hex,4")[1] == b"E01", "a malformed m gets E01")
    check(srv.ask(b"m10,4")[1] == b"E14", "memory the replay does not know gets E14")
    check(srv.ask(b"M1000,1:00")[1] == b"E01", "a memory write gets E01")
    check(srv.ask(b"Z9,0,1")[1] == b"", "an unknown breakpoint type gets the empty reply")
    srv.s.sendall(b"garbage outside any packet\n")
    ack, r = srv.ask(b"?")
    check(ack == b"+" and r.startswith(b"T05"), "stray bytes are ignored: '?' still answers " + r.decode()[:20])
    ack, r = srv.ask(b"g")
    check(r.startswith(b"") and len(r) > 32, "g answers after all that")
    # A packet longer than the PacketSize offered: not gdb.
    srv.s.sendall(b"$" + b"a" * 20000 + b"#00")
    rc, out, err = srv.finish()
    check(rc == 1, "an oversized packet ends the session with status 1 (%s)" % rc)
    check("longer than" in err, "... and says so: " + err.strip().splitlines()[-1][:100] if err.strip() else "nothing")
    check("bad packet from gdb" in err and "malformed packet from gdb" in err, "the bad packets are logged")
    no_crash(rc, err, "oversized packet")


def gone_mid_step(sim, capture, packet):
    srv = Server(sim, capture)
    srv.ask(b"qSupported")
    # The step, then the client goes away without waiting for its reply.
    srv.s.sendall(frame(packet))
    srv.s.shutdown(socket.SHUT_RDWR)
    srv.s.close()
    rc, out, err = srv.finish()
    what = packet.decode()
    check(rc == 1, "a client gone during '%s': status 1 (%s)" % (what, rc))
    check(re.search(r"gdb went away|did not reach gdb", err) is not None,
          "... and a message that says so: " + (err.strip().splitlines()[-1][:100] if err.strip() else "nothing"))
    no_crash(rc, err, "gone during " + what)


def gone_between_packets(sim, capture):
    srv = Server(sim, capture)
    srv.ask(b"qSupported")
    srv.ask(b"vCont;s")
    srv.s.close()
    rc, out, err = srv.finish()
    check(rc == 1 and "went away without detaching" in err,
          "a client gone between packets: status 1 and a message (%s: %s)" %
          (rc, err.strip().splitlines()[-1][:80] if err.strip() else ""))
    no_crash(rc, err, "gone between packets")


def detach(sim, capture):
    srv = Server(sim, capture)
    srv.ask(b"QStartNoAckMode")
    # No acknowledgements from here on.
    srv.s.sendall(frame(b"vCont;s"))
    r = srv.reply()
    check(r.startswith(b"T05"), "no-ack mode: a step answers " + r.decode()[:20])
    srv.s.sendall(frame(b"bs"))
    check(srv.reply().startswith(b"T05"), "no-ack mode: a reverse step answers")
    srv.s.sendall(frame(b"bs"))
    check(b"replaylog:begin" in srv.reply(), "a reverse step at the start: replaylog:begin")
    srv.s.sendall(frame(b"D"))
    check(srv.reply() == b"OK", "D gets OK")
    rc, out, err = srv.finish()
    check(rc == 0 and "gdb detached" in out, "after D the server exits 0 (%s)" % rc)


def long_continue(sim):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "loop.kjitcap")
        loop_capture.write(path, 2000000)
        srv = Server(sim, path)
        srv.ask(b"qSupported")
        srv.s.sendall(frame(b"c"))
        check(srv.expect_ack() == b"+", "a long continue is acknowledged")
        time.sleep(0.3)
        srv.s.sendall(b"\x03")
        r = srv.reply()
        check(r.startswith(b"T02"), "^C stops it with SIGINT: " + r.decode()[:20])
        ack, r = srv.ask(b"qRcmd," + b"where".hex().encode())
        m = re.search(r"instruction (\d+) of (\d+)", bytes.fromhex(r[1:].decode()).decode() if r.startswith(b"O") else "")
        check(m is not None and 0 < int(m.group(1)) < int(m.group(2)), "... in the middle: " +
              (m.group(0) if m else r.decode()[:40]))
        srv.reply()  # OK after the monitor output
        srv.s.sendall(frame(b"c"))
        srv.expect_ack()
        time.sleep(0.3)
        srv.s.shutdown(socket.SHUT_RDWR)
        srv.s.close()
        rc, out, err = srv.finish()
        check(rc == 1 and "gdb went away during 'c'" in err,
              "a client gone during a long continue is seen while it runs (%s: %s)" %
              (rc, err.strip().splitlines()[-1][:80] if err.strip() else ""))
        no_crash(rc, err, "gone during a long continue")


def cannot_go_on(sim, failing):
    srv = Server(sim, failing)
    srv.ask(b"QStartNoAckMode")
    srv.s.sendall(frame(b"c"))
    console = srv.reply()
    stop = srv.reply()
    text = bytes.fromhex(console[1:].decode()).decode() if console.startswith(b"O") else ""
    check("the replay cannot go on" in text and "rdpkru" in text, "the console says why: " + text.strip()[:90])
    check(stop.startswith(b"T0b"), "continue stops with SIGSEGV: " + stop.decode()[:12])
    srv.s.sendall(frame(b"c"))
    srv.reply()
    check(srv.reply().startswith(b"T0b"), "... and again at the same place")
    srv.s.sendall(frame(b"bs"))
    check(srv.reply().startswith(b"T05"), "a reverse step from there")
    srv.s.sendall(frame(b"D"))
    srv.reply()
    rc, out, err = srv.finish()
    check(rc == 0, "detached: status 0 (%s)" % rc)


def main():
    sim, capture, failing = sys.argv[1], sys.argv[2], sys.argv[3]
    t0 = time.time()
    malformed_then_oversized(sim, capture)
    gone_mid_step(sim, capture, b"vCont;s")
    gone_mid_step(sim, capture, b"c")
    gone_between_packets(sim, capture)
    detach(sim, capture)
    long_continue(sim)
    cannot_go_on(sim, failing)
    print("gdb_bad_clients: %s, %d checks failed (%.1f s)" % ("FAIL" if failures else "ok", len(failures),
                                                              time.time() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
