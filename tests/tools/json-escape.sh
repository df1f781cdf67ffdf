#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The JSON escaper: its own cases, then random bytes (control characters,
# invalid UTF-8) escaped and parsed by Python's json: valid JSON every time,
# and valid UTF-8 input comes back unchanged.
# Usage: tests/tools/json-escape.sh JSON_ESCAPE_TEST
set -uo pipefail
T="$1"
"$T" || exit 1
python3 - "$T" <<'PY'
import json, random, subprocess, sys
rng = random.Random(7)
samples = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) for _ in range(300)]
samples += [bytes(range(256)), "naïve €uro 𝄞 \u2028".encode(), b"\x00\x01\"\\\x7f"]
for s in samples:
    out = subprocess.run([sys.argv[1], "--stdin"], input=s, capture_output=True, check=True).stdout
    try:
        got = json.loads(out)
    except ValueError as e:
        sys.exit(f"json-escape: FAIL: {s!r} gave invalid JSON {out!r}: {e}")
    try:
        text = s.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and got != text:
        sys.exit(f"json-escape: FAIL: {s!r} came back as {got!r}")
    if text is None and "\ufffd" not in got:
        sys.exit(f"json-escape: FAIL: invalid {s!r} has no U+FFFD: {got!r}")
    if any(ord(c) < 0x20 for c in out.rstrip(b"\n").decode()):
        sys.exit(f"json-escape: FAIL: a raw control character in {out!r}")
print(f"json-escape: PASS ({len(samples)} random and edge inputs parsed)")
PY
