#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The progress line: on a terminal (script(1) gives the probe one) work of
# 2.5 s draws "probe: N.N s, ..." lines in place, at most four a second,
# both polled and from the blocking phase's thread, and erases the last
# one; off a terminal (a pipe, as in every test) nothing but the output.
# A workload of half a second draws nothing either.
# Usage: tests/tools/progress.sh PROGRESS_PROBE
set -uo pipefail
P="$1"
fail=0
bad() { echo "progress: FAIL: $*" >&2; fail=1; }
command -v script > /dev/null || { echo "progress: FAIL: script(1) is missing (bsdutils)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# off a terminal: stderr a file
"$P" 2.5 > "$tmp/out" 2> "$tmp/err" || bad "probe failed"
[ "$(cat "$tmp/out")" = "done" ] || bad "output: $(cat "$tmp/out")"
[ -s "$tmp/err" ] && bad "progress written off a terminal: $(od -c "$tmp/err" | head -3)"

# on a terminal: the typescript holds what the terminal got
script -qc "$P 2.5" "$tmp/tty" > /dev/null 2>&1 || bad "script failed"
tr '\r' '\n' < "$tmp/tty" > "$tmp/lines"
n=$(grep -c '^probe: [0-9.]* s' "$tmp/lines")
grep -q '^probe: [0-9.]* s, step [0-9]' "$tmp/lines" || bad "no polled line: $(head -c 300 "$tmp/lines")"
grep -q '^probe: [0-9.]* s, blocking' "$tmp/lines" || bad "no line from the blocking phase"
first=$(grep -m1 -o '^probe: [0-9.]*' "$tmp/lines" | cut -d' ' -f2)
awk -v f="$first" 'BEGIN { exit !(f >= 1.0) }' || bad "a line before a second: $first s"
# 1.5 s of lines at most four a second (and a few of scheduling slack)
if [ "$n" -lt 3 ] || [ "$n" -gt 9 ]; then bad "$n lines drawn in 1.5 s"; fi
# the last thing before "done" is the erasure: CR, clear to the end of line
printf '\r\033[K' > "$tmp/erase"
grep -qF "$(cat "$tmp/erase")done" "$tmp/tty" || bad "the line is not erased before the output: $(tail -c 80 "$tmp/tty" | od -c | tail -4)"

# short work: nothing on a terminal either
script -qc "$P 0.5" "$tmp/short" > /dev/null 2>&1
grep -q 'probe:' "$tmp/short" && bad "a line for half a second of work"

[ "$fail" = 0 ] && echo "progress: PASS ($n lines in place on a terminal, none off it)"
exit "$fail"
