#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
r"""Writes a kjit.data file (include/uapi/kjit/data_format.h) from the command
line, for tests of kjit-report that need no guest.

  write-data.py OUT [--meta K=V]... [--symbol NAME ADDR SIZE]...
                [--block ADDR LEN NINSN COUNT]... [--modules-line TEXT]...
                [--event TYPE PC SP NS PID CPU [INSNS SWITCHES]]...
                [--no-modules] [--version N]
TYPE is entry, call or return (EVENTS, data_format.h); INSNS and SWITCHES
(given together, as `--event ... INSNS SWITCHES`) are the CPU's instruction
count and the thread's context switches, flag KJIT_DATA_EV_INSNS.  The
format version is 2 unless given (1: 32-byte events, no counts); a NAME may hold
\xNN escapes (bytes a kernel would not use, for escaping tests).
Addresses are hex or decimal.  META gets tool=bbcount, kernel_release=test
and stext=0xffffffff81000000 unless given."""
import struct
import sys


def crc32(data, crc=0):
    t = [0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
         0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
         0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c]
    c = ~crc & 0xffffffff
    for b in data:
        c ^= b
        c = t[c & 15] ^ (c >> 4)
        c = t[c & 15] ^ (c >> 4)
    return ~c & 0xffffffff


def section(stype, payload):
    crc = crc32(struct.pack("<IQ", stype, len(payload)) + payload)
    pad = b"\0" * (-len(payload) % 8)
    return struct.pack("<IIQ", stype, crc, len(payload)) + payload + pad


def main(argv):
    out, args = argv[1], argv[2:]
    meta = {"tool": "bbcount", "kernel_release": "test", "stext": "0xffffffff81000000"}
    symbols, blocks, modules, events, with_modules, version = [], [], [], [], True, 2
    ev_types = {"entry": 1, "call": 2, "return": 3}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--meta":
            k, v = args[i + 1].split("=", 1)
            meta[k] = v
            i += 2
        elif a == "--symbol":
            symbols.append((args[i + 1], int(args[i + 2], 0), int(args[i + 3], 0)))
            i += 4
        elif a == "--block":
            blocks.append(tuple(int(x, 0) for x in args[i + 1:i + 5]))
            i += 5
        elif a == "--event":
            t = ev_types[args[i + 1]]
            pc, sp, ns, pid, cpu = (int(x, 0) for x in args[i + 2:i + 7])
            i += 7
            counts = None
            if i + 1 < len(args) and not args[i].startswith("--"):
                counts = (int(args[i], 0), int(args[i + 1], 0))
                i += 2
            events.append((pc, sp, ns, pid, cpu, t, counts))
        elif a == "--version":
            version = int(args[i + 1])
            i += 2
        elif a == "--modules-line":
            modules.append(args[i + 1])
            i += 2
        elif a == "--no-modules":
            with_modules = False
            i += 1
        else:
            sys.exit("write-data.py: unknown argument " + a)
    # argv's bytes as given (surrogateescape): tests write invalid UTF-8
    secs = [section(1, "".join(f"{k}={v}\n" for k, v in meta.items()).encode("utf-8", "surrogateescape"))]
    secs.append(section(3, b"".join(struct.pack("<QQIHH", a, c, ln, n, 0) for a, ln, n, c in blocks)))
    if events:
        payload = b""
        for pc, sp, ns, pid, cpu, t, counts in events:
            if version == 1:
                assert counts is None, "version 1 events have no counts"
                payload += struct.pack("<QQQIHBB", pc, sp, ns, pid, cpu, t, 0)
            else:
                insns, switches = counts or (0, 0)
                payload += struct.pack("<QQQIHBBQII", pc, sp, ns, pid, cpu, t, 1 if counts else 0,
                                       insns, switches, 0)
        secs.append(section(4, payload))
    sym = b""
    for name, addr, size in symbols:
        # argv's bytes as given (surrogateescape), then \xNN escapes: tests
        # write control characters and invalid UTF-8 either way
        nb = name.encode("utf-8", "surrogateescape").decode("unicode_escape").encode("latin-1")
        sym += struct.pack("<QIHBB", addr, size, len(nb), ord("t"), 0) + nb + b"\0" * (-len(nb) % 8)
    secs.append(section(6, sym))
    if with_modules:
        secs.append(section(9, "".join(m + "\n" for m in modules).encode()))
    with open(out, "wb") as f:
        f.write(b"KJITDATA" + struct.pack("<IIQ", version, len(secs), 0) + b"".join(secs))


if __name__ == "__main__":
    main(sys.argv)
