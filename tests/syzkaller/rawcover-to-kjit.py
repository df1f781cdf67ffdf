#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""syz-manager's /rawcover as kjit-report's --kcov input.

/rawcover prints one PC a line, `0x` and 64 bits of hex, each the KCOV PC
minus 5 (syzkaller's PreviousInstructionPC on amd64, pkg/cover/backend/pc.go:
it takes a KCOV PC for the return address of a 5-byte call).  kjit's KCOV
PCs are block starts, so the PC kjit recorded is the printed one plus 5.
kjit-report stops at any PC outside the vmlinux's text, so the module PCs
(kjit's are canonical, like the kernel's: past the vmlinux's _end) are
dropped and counted; a PC elsewhere outside .text means another vmlinux or a
file that is not /rawcover, and stops this with an error.

Prints the PCs one a line (`0x...`), as `kjitctl report --kcov` reads them:
each line's count is how often its PC appears.

Usage: rawcover-to-kjit.py [--add N] VMLINUX [RAWCOVER...]   (none or -: stdin)
  --add N   added to every PC (default 5; 0 for bfc478367's
            `syz-execprog -coverfile`, which writes the KCOV PCs themselves)
"""
import re
import subprocess
import sys

PC_LINE = re.compile(r"0x[0-9a-fA-F]{1,16}")


def fail(msg):
    print(f"rawcover-to-kjit: {msg}", file=sys.stderr)
    sys.exit(1)


def vmlinux_layout(path):
    """(.text start, .text end, _end) of the vmlinux at its link-time addresses."""
    try:
        sections = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout
        symbols = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError as e:
        fail(f"{path}: {e.cmd[0]}: {e.stderr.strip()}")
    text = None
    for line in sections.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == ".text" and fields[2] == "PROGBITS":
            text = int(fields[3], 16), int(fields[3], 16) + int(fields[5], 16)
    if not text:
        fail(f"{path}: no .text section")
    end = [int(f[0], 16) for f in (l.split() for l in symbols.splitlines()) if len(f) == 3 and f[2] == "_end"]
    if len(end) != 1:
        fail(f"{path}: no symbol _end: not a vmlinux")
    return text[0], text[1], end[0]


def main(argv):
    add = 5
    if argv[:1] == ["--add"]:
        if len(argv) < 2 or not argv[1].isdigit():
            fail("--add takes a number of bytes")
        add, argv = int(argv[1]), argv[2:]
    if not argv or argv[0].startswith("-") and argv[0] != "-":
        print(__doc__.split("\n\n")[-1], file=sys.stderr, end="")
        sys.exit(2)
    lo, hi, end = vmlinux_layout(argv[0])
    kept, modules = [], 0
    for name in argv[1:] or ["-"]:
        try:
            f = sys.stdin if name == "-" else open(name)
            lines = f.read().splitlines()
        except OSError as e:
            fail(f"{name}: {e.strerror}")
        for n, line in enumerate(lines, 1):
            word = line.strip()
            if not word:
                continue
            where = f"{'stdin' if name == '-' else name}:{n}"
            if not PC_LINE.fullmatch(word):
                fail(f"{where}: not a PC (one 0x-prefixed hex number a line, as /rawcover prints): {line[:80]!r}")
            pc = int(word, 16) + add
            if lo <= pc < hi:
                kept.append(pc)
            elif end <= pc < 1 << 64:
                modules += 1
            else:
                fail(f"{where}: {word} + {add} = {pc:#x} is neither in the vmlinux's .text "
                     f"({lo:#x}-{hi:#x}) nor past its end (module code): another kernel's vmlinux, "
                     "or PCs that are not /rawcover's (64-bit, the KCOV PC minus 5)?")
    if not kept:
        fail(f"no PC in the vmlinux's .text ({modules} of module code)")
    sys.stdout.write("".join(f"{pc:#x}\n" for pc in kept))
    print(f"rawcover-to-kjit: {len(kept)} PCs in the vmlinux's .text; dropped {modules} of module code",
          file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
