#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/lab/guest-hang-dump.py's int3 check against a made-up monitor.

A vCPU that keeps trapping on an int3 where guest memory holds none runs
stale code (QEMU's multi-threaded TCG): the dump must say so, and must
not when the int3 is really there (text_poke_bp's first step).
Usage: hang-dump-selftest.py SOURCE_DIR"""
import contextlib
import importlib.util
import io
import sys

spec = importlib.util.spec_from_file_location("hang_dump", sys.argv[1] + "/tools/lab/guest-hang-dump.py")
dump = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dump)

SCHED = 0xffffffff8ac50ee3  # the int3's address; the trap saves the one after it


def name(pc):
    if 0xffffffff8ae00ba0 <= pc < 0xffffffff8ae00c00:
        return "asm_exc_int3+0x%x" % (pc - 0xffffffff8ae00ba0)
    if 0xffffffff8ac50d10 <= pc < 0xffffffff8ac51700:
        return "__schedule+0x%x" % (pc - 0xffffffff8ac50d10)
    return None


def monitor(memory):
    def cmd(line):
        if line.startswith("cpu "):
            return ""
        if line.startswith("x/8xb "):
            addr = int(line.split()[1], 16)
            got = [memory.get(addr + i, 0x90) for i in range(8)]
            return "%x: %s" % (addr, " ".join("0x%02x" % b for b in got))
        raise AssertionError("unexpected monitor command " + line)
    return cmd


seen = {(1, "rip"): [0xffffffff8ae00ba0, 0xffffffff8ae00ba3, SCHED],
        (1, "interrupted"): [SCHED, SCHED + 1],
        (0, "rip"): [0xffffffff8ac5abf0]}
failures = 0
for what, memory, want in (
        ("a nop where vCPU 1 traps", {SCHED: 0x0f, SCHED + 1: 0x1f, SCHED + 2: 0x44}, True),
        ("the int3 still there", {SCHED: 0xcc, SCHED + 1: 0x1f, SCHED + 2: 0x44}, False)):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        dump.stale_int3(monitor(memory), name, seen)
    text = out.getvalue()
    said = "stale code" in text
    shown = "memory from %x: " % (SCHED - 1) in text
    ok = said == want and shown
    failures += not ok
    print("%s: %s (stale code %s, memory shown %s)" % ("PASS" if ok else "FAIL", what,
                                                     "reported" if said else "not reported", shown))
    if not ok:
        print(text)
sys.exit(1 if failures else 0)
