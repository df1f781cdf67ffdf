#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""syzkaller's coverage points of a vmlinux on amd64, found as bfc478367
finds them before it builds a coverage report generator (syz-manager's
coverage pages, focus_areas and cover_filter, syz-cover):

- elfReadSymbols (pkg/cover/backend/elf.go): the address of the last
  FUNC or NOTYPE symbol named __sanitizer_cov_trace_pc lying in .text;
- readCoverPoints (pkg/cover/backend/dwarf.go): every byte e8 in .text whose
  rel32 (`call`) reaches that address is a point.

Prints the number of points and the first few (--list: every point, one a
line).  Exits 1 with syzkaller's
own error when it would stop there: no such symbol, or no point in the
vmlinux (makeDWARFUnsafe).  Without Go, so that ctest can check
tests/syzkaller/kernel-obj.sh; tests/syzkaller/syz-cover.sh runs
syzkaller's code itself.

Usage: cover-points.py [--list] VMLINUX
"""
import struct
import subprocess
import sys

SYMBOL = "__sanitizer_cov_trace_pc"


def readelf(flag, path):
    return subprocess.run(["readelf", flag, "-W", path], capture_output=True, text=True, check=True).stdout


def main(argv):
    listing = argv[:1] == ["--list"]
    argv = argv[listing:]
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[-1], file=sys.stderr, end="")
        sys.exit(2)
    path = argv[0]
    text = None
    for line in readelf("-S", path).splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == ".text" and fields[2] == "PROGBITS":
            text = [int(x, 16) for x in fields[3:6]]       # address, file offset, size
    if not text:
        sys.exit(f"{path}: no .text section in the object file")
    addr, offset, size = text
    trace_pc = 0
    for line in readelf("-s", path).splitlines():
        f = line.split()
        if len(f) == 8 and f[7] == SYMBOL and f[3] in ("FUNC", "NOTYPE"):
            value, length = int(f[1], 16), int(f[2], 0)
            if addr <= value and value + length <= addr + size:
                trace_pc = value
    if not trace_pc:
        sys.exit(f"no {SYMBOL} symbol in the object file")
    with open(path, "rb") as elf:
        elf.seek(offset)
        data = elf.read(size)
    points = []
    i = data.find(b"\xe8")
    while i != -1 and i + 5 <= len(data):
        if addr + i + 5 + struct.unpack_from("<i", data, i + 1)[0] == trace_pc:
            points.append(addr + i)
        i = data.find(b"\xe8", i + 1)
    if not points:
        sys.exit(f"{path} doesn't contain coverage callbacks (set CONFIG_KCOV=y on linux)")
    if listing:
        sys.stdout.write("".join(f"{p:#x}\n" for p in points))
        return
    print(f"{SYMBOL} {trace_pc:#x}; coverage points {len(points)}: "
          + " ".join(f"{p:#x}" for p in points[:3]) + (" ..." if len(points) > 3 else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
