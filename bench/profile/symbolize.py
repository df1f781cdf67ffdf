#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the PCs of single-stepped system calls (step_syscall.py) into
instructions per kernel symbol, kjit attached against native.

Usage: symbolize.py KALLSYMS CACHE_BYTES ATTACHED.txt NATIVE.txt > report.md
KALLSYMS is the guest's /proc/kallsyms of the same boot; CACHE_BYTES the
size of kjit.ko's .kjit_cache section.  kallsyms has no sizes, and ftrace's
dynamic trampolines are allocated in module space without always being
listed, so the code cache is bounded explicitly and module-space code with
no symbol is reported as such.  Each phase's
sample with the median length is the one broken down; every sample's length
is listed so a stray interrupt or a first-time translation shows up."""
import bisect
import collections
import statistics
import sys


NO_SYMBOL = "(module space, no symbol: ftrace's dynamic trampoline)"


def load_syms(path, cache_bytes):
    syms = []
    for line in open(path):
        f = line.split()
        if len(f) < 3 or f[1].lower() not in "tw":
            continue
        name = f[2] + (" " + f[3] if len(f) > 3 else "")
        syms.append((int(f[0], 16), name))
        if f[2] == "kjit-code-cache":
            syms.append((int(f[0], 16) + cache_bytes, NO_SYMBOL))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def load_samples(path):
    lines = open(path).read().split("\n")
    out = []
    for i, l in enumerate(lines):
        if l.startswith("sample "):
            out.append([int(x, 16) for x in lines[i + 1].split()])
    return out


def breakdown(pcs, addrs, names):
    c = collections.Counter()
    for pc in pcs:
        i = bisect.bisect_right(addrs, pc) - 1
        c[names[i] if i >= 0 else "?"] += 1
    return c


def median_sample(samples):
    m = statistics.median_low(len(s) for s in samples)
    return next(s for s in samples if len(s) == m)


def main():
    addrs, names = load_syms(sys.argv[1], int(sys.argv[2], 0))
    att, nat = load_samples(sys.argv[3]), load_samples(sys.argv[4])
    if not att or not nat:
        sys.exit("symbolize: no samples")
    a, n = median_sample(att), median_sample(nat)
    ca, cn = breakdown(a, addrs, names), breakdown(n, addrs, names)
    print("Instructions per getppid system call, entry_SYSCALL_64 to sysret, single-stepped.\n")
    print("- attached (kjit, no tool): %s; median %d" % (", ".join(str(len(s)) for s in att), len(a)))
    print("- native: %s; median %d" % (", ".join(str(len(s)) for s in nat), len(n)))
    print("- added by kjit: %d instructions\n" % (len(a) - len(n)))
    print("| symbol | attached | native | added |\n|---|---|---|---|")
    for sym in sorted(set(ca) | set(cn), key=lambda s: -(ca[s] - cn[s])):
        if ca[sym] != cn[sym] or ca[sym] >= 10:
            print("| `%s` | %d | %d | %+d |" % (sym, ca[sym], cn[sym], ca[sym] - cn[sym]))


if __name__ == "__main__":
    main()
