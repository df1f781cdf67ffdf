#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table tests/syzkaller/manager.sh prints: per run, per minute since
the first fuzzer connected, syz-manager's corpus size, corpus signal,
corpus coverage, executions and crashes (its -bench file, one JSON object
a minute), and the last of its 10-second status lines.

Usage: manager-summary.py OUT_DIR RUN...   (OUT_DIR/RUN/bench.json, manager.log)
"""
import json
import os
import re
import sys

COLUMNS = ("uptime", "corpus", "signal", "coverage", "exec total", "crashes")


def bench_samples(path):
    """The concatenated JSON objects syz-manager -bench appends."""
    try:
        text = open(path).read()
    except OSError:
        return []
    decoder, pos, samples = json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return samples
        sample, pos = decoder.raw_decode(text, pos)
        samples.append(sample)


def last_status(path):
    status = None
    try:
        for line in open(path, errors="replace"):
            if re.search(r"VMs \d+, executed \d+, cover \d+, signal", line):
                status = line.strip()
    except OSError:
        pass
    return status


def main():
    out, runs = sys.argv[1], sys.argv[2:]
    for run in runs:
        print(f"== {run}")
        samples = bench_samples(os.path.join(out, run, "bench.json"))
        print("  minute " + " ".join(f"{c:>10}" for c in COLUMNS[1:]))
        for s in samples:
            print(f"  {s.get('uptime', 0) / 60:6.1f} " +
                  " ".join(f"{s.get(c, 0):>10}" for c in COLUMNS[1:]))
        if not samples:
            print("  (no bench sample: no fuzzer connected for a full minute)")
        print(f"  last status: {last_status(os.path.join(out, run, 'manager.log'))}")


if __name__ == "__main__":
    main()
