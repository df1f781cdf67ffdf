#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A made-up kernel capture of a long invocation: `mov ecx, N; 1: dec ecx;
jnz 1b; ret`, 2N + 2 instructions with no memory access and an empty
replay log (docs/capture-format.md).  For the gdb server's tests and its
latency measure, where the sample captures are a few thousand instructions.
Usage: loop_capture.py FILE N (prints the ret's address)."""
import struct
import sys
import zlib

CODE_AT, STACK_AT, SENTINEL = 0xffffffff81000000, 0xffa0000000400000, 0xfffffffff0000000


def section(kind, payload):
    head = struct.pack("<IQ", kind, len(payload))
    return head + struct.pack("<I", zlib.crc32(head + payload) & 0xffffffff) + payload


def write(path, n):
    """Writes the capture; returns the address of its ret."""
    code = b"\xb9" + struct.pack("<I", n) + b"\xff\xc9\x75\xfc\xc3"
    regions = struct.pack("<I", 2)
    regions += struct.pack("<QQII", STACK_AT, 0x4000, 3, 0) + bytes(0x4000)  # rw-: the task stack
    regions += struct.pack("<QQII", CODE_AT, len(code), 5, 0) + code       # r-x
    gpr = [0] * 16
    gpr[4] = STACK_AT + 0x3f00
    regs = struct.pack("<16Q", *gpr) + struct.pack("<4Q", CODE_AT, 0x202, 0, 0)
    kresult = struct.pack("<IIQQII", 1, 0, 0, 0, 0, 0)  # returned
    secs = [section(1, regions), section(2, regs), section(3, struct.pack("<QQ", CODE_AT, SENTINEL)),
            section(4, b"loop#1"), section(0x100, struct.pack("<I", 0)), section(0x101, struct.pack("<I", 0)),
            section(0x102, struct.pack("<I", 0)), section(0x103, kresult)]
    with open(path, "wb") as f:
        f.write(b"KJITCAP\0" + struct.pack("<IIII", 2, len(secs), 0, 0) + b"".join(secs))
    return CODE_AT + len(code) - 1


if __name__ == "__main__":
    print(hex(write(sys.argv[1], int(sys.argv[2]))))
