#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How long a step takes in `kjit-sim replay CAPTURE --gdb`, forward and
backward, on each capture given (reported, not a timed test).

Two measures per capture and view (original; original with no checkpoint
but the start, --checkpoint-every 0; --translated):
  protocol: a raw client's round trip for one `vCont;s` / `bs` packet
    (the server's own latency), stepping forward through the first N
    instructions, then back to the start; and `bc` from the end back to
    the start (a breakpoint-less reverse continue: every checkpoint
    interval run again);
  gdb: what the user waits for: Debian's gdb (its Python API times N
    `stepi` and N `reverse-stepi` commands; gdb reads the registers and the
    code at each stop), with the debug vmlinux when given.
--long N adds a made-up invocation of 2N + 2 instructions (a loop with no
memory access: `mov ecx, N; 1: dec ecx; jnz 1b; ret`), where going back
from the end costs one checkpoint interval, or the whole run without them.
Usage: gdb-step-latency.py KJIT_SIM [--vmlinux FILE] [--steps N] [--long N] CAPTURE...
Prints a Markdown table.
"""
import argparse
import os
import re
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../tests/sim"))
import loop_capture  # noqa: E402  (tests/sim/loop_capture.py)


def frame(payload):
    return b"$" + payload + b"#" + b"%02x" % (sum(payload) % 256)


def start(sim, capture, extra):
    p = subprocess.Popen([sim, "replay", capture, "--gdb", "127.0.0.1:0"] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port, command, total = None, None, None
    for line in p.stdout:
        m = re.search(r", (\d+) instructions \(", line)
        if m:
            total = int(m.group(1))
        m = re.match(r"kjit-sim: waiting for gdb on 127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
        if line.startswith("  gdb "):
            command = shlex.split(line)
            break
    return p, port, command, total


class Client:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as gdb does
        self.buf = b""
        self.ask(b"QStartNoAckMode", acked=True)

    def ask(self, payload, acked=False):
        self.s.sendall(frame(payload))
        while True:
            m = re.match(rb"\+*\$([^#]*)#..", self.buf, re.S)
            if m:
                self.buf = self.buf[m.end():]
                if acked:
                    self.s.sendall(b"+")
                return m.group(1)
            self.buf += self.s.recv(65536)


def protocol(sim, capture, extra, steps):
    """Round trips of N forward steps from the start, then N back."""
    p, port, _cmd, total = start(sim, capture, extra)
    c = Client(port)
    n = min(steps, total - 1)
    fwd, back = [], []
    for _ in range(n):
        t = time.perf_counter()
        c.ask(b"vCont;s")
        fwd.append(time.perf_counter() - t)
    for _ in range(n):
        t = time.perf_counter()
        c.ask(b"bs")
        back.append(time.perf_counter() - t)
    c.ask(b"D")
    p.wait(timeout=60)
    return n, total, fwd, back


def reverse_from_end(sim, capture, extra, last_pc):
    """bs and bc from the last instruction, the worst case (a re-run from
    the last checkpoint; bc: every interval).  There by steps, or by a
    breakpoint on `last_pc`."""
    p, port, _cmd, total = start(sim, capture, extra)
    c = Client(port)
    if last_pc:
        c.ask(b"Z0,%x,1" % last_pc)
        c.ask(b"c")
        c.ask(b"z0,%x,1" % last_pc)
    else:
        for _ in range(total - 1):
            c.ask(b"vCont;s")
    t = time.perf_counter()
    c.ask(b"bs")
    bs = time.perf_counter() - t
    t = time.perf_counter()
    r = c.ask(b"bc")
    bc = time.perf_counter() - t
    assert b"replaylog:begin" in r, r
    c.ask(b"D")
    p.wait(timeout=60)
    return bs, bc


def with_gdb(gdb, sim, capture, extra, steps):
    p, _port, command, total = start(sim, capture, extra)
    n = min(steps, total - 1)
    script = """python
import time
def timed(cmd, n):
    t = time.perf_counter()
    for _ in range(n):
        gdb.execute(cmd, to_string=True)
    return (time.perf_counter() - t) / n
f = timed("stepi", %d)
b = timed("reverse-stepi", %d)
print("LATENCY %%f %%f" %% (f, b))
end
""" % (n, n)
    with tempfile.NamedTemporaryFile("w", suffix=".gdb", delete=False) as f:
        f.write(script)
    try:
        out = subprocess.run([gdb, "-nx", "-batch"] + command[1:] + ["-x", f.name, "-ex", "detach"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600).stdout
    finally:
        os.unlink(f.name)
    p.wait(timeout=60)
    m = re.search(r"LATENCY (\S+) (\S+)", out)
    return (float(m.group(1)), float(m.group(2))) if m else (None, None)


def ms(v):
    return "-" if v is None else "%.2f" % (v * 1e3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kjit_sim")
    ap.add_argument("captures", nargs="+")
    ap.add_argument("--vmlinux", default="")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--gdb", default="/usr/bin/gdb")
    ap.add_argument("--long", type=int, default=0)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    last = {}
    if args.long:
        path = os.path.join(tmp.name, "loop-%d.kjitcap" % (2 * args.long + 2))
        last[path] = loop_capture.write(path, args.long)
        args.captures.append(path)
    print("| capture | view | insns | stepi (protocol) median / max ms | reverse-stepi (protocol) median / max ms |"
          " bs / bc from the end ms | gdb stepi / reverse-stepi ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for cap in args.captures:
        for view, extra in (("original", []), ("original, no checkpoints", ["--checkpoint-every", "0"]),
                            ("translated", ["--translated"])):
            gx = ["--vmlinux", args.vmlinux] if args.vmlinux and view != "translated" else []
            n, total, fwd, back = protocol(args.kjit_sim, cap, extra, args.steps)
            bs, bc = reverse_from_end(args.kjit_sim, cap, extra, last.get(cap) if view != "translated" else None)
            gf, gb = with_gdb(args.gdb, args.kjit_sim, cap, extra + gx, args.steps)
            print("| %s | %s | %d | %s / %s | %s / %s | %s / %s | %s / %s |" % (
                os.path.basename(cap), view, total, ms(statistics.median(fwd)), ms(max(fwd)),
                ms(statistics.median(back)), ms(max(back)), ms(bs), ms(bc), ms(gf), ms(gb)), flush=True)


if __name__ == "__main__":
    main()
