#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit-report's JSON without a guest: schema_version and document name
# (docs/data-format.md, "JSON"), and strings with control characters and
# bytes that are not UTF-8 (a recorded command line, a symbol) still make
# valid JSON, with U+FFFD for each bad byte.
# Usage: tests/report/json.sh KJIT_REPORT
set -uo pipefail
report="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail() { echo "report-json: FAIL: $*" >&2; exit 1; }
python3 "$here/write-data.py" "$T/k.data" --meta "command=cat $(printf 'a\001\tb\033[0m\377z')" \
  --symbol "$(printf 'fn_\302bad\037')" 0xffffffff81001000 0x40 \
  --block 0xffffffff81001000 0x10 4 7 || fail "write-data.py"
"$report" -i "$T/k.data" -f json -o "$T/k.json" 2> "$T/err" || fail "kjit-report: $(cat "$T/err")"
python3 - "$T/k.json" <<'PY' || exit 1
import json, sys
raw = open(sys.argv[1], "rb").read()
try:
    d = json.loads(raw)
except ValueError as e:
    sys.exit(f"report-json: FAIL: invalid JSON: {e}")
if d.get("schema_version") != 3 or d.get("document") != "report":
    sys.exit(f"report-json: FAIL: schema_version {d.get('schema_version')}, document {d.get('document')}")
cmd = d["meta"]["command"]
if cmd != "cat a\x01\tb\x1b[0m\ufffdz":
    sys.exit(f"report-json: FAIL: command came back as {cmd!r}")
names = [b["function"] for b in d["blocks"]]
if names != ["fn_\ufffdbad\x1f"]:
    sys.exit(f"report-json: FAIL: block functions {names!r}")
if any(c < 0x20 and c != 0x0a for c in raw):
    sys.exit("report-json: FAIL: a raw control character in the output")
print("report-json: PASS (schema_version 3, control characters and invalid UTF-8 escaped)")
PY
