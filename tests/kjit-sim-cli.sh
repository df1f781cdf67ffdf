#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit-sim's command line: every subcommand's options go through
# getopt_long, and a number that is not one ("abc", "12x", "-1") is an
# error (exit 2, the option named), never read as 0; unknown options,
# missing values, missing and extra operands are errors too.  A good
# command line still works (a committed capture replays).
# The manual (docs/kjit-sim.1) renders without groff warnings and names
# every subcommand and every long option of the getopt tables.
# Usage: tests/kjit-sim-cli.sh KJIT_SIM CAPTURE MANPAGE SOURCES...
set -uo pipefail
S="$1" C="$2" M="$3"
shift 3
fail=0
bad() { echo "kjit-sim-cli: FAIL: $*" >&2; fail=1; }
# "ARGS...|what stderr must say" (CAPTURE stands for the capture)
while IFS='|' read -r args says; do
  read -ra av <<< "${args//CAPTURE/$C}"
  err=$("$S" "${av[@]}" 2>&1 > /dev/null); rc=$?
  [ "$rc" = 2 ] || bad "kjit-sim $args exits $rc, not 2: $err"
  grep -qF -- "$says" <<< "$err" || bad "kjit-sim $args does not say '$says': $err"
done <<'EOF_CASES'
replay CAPTURE --budget abc|kjit-sim replay: --budget abc: not a number
replay CAPTURE --budget -1|--budget -1: not a number
replay CAPTURE --profile 3x|--profile 3x: not a number
replay CAPTURE --bogus|kjit-sim replay: unrecognized option '--bogus'
replay CAPTURE --budget|kjit-sim replay: option '--budget' requires an argument
replay CAPTURE extra|kjit-sim replay: unexpected argument extra
replay --warm|kjit-sim replay: missing CAPTURE
replay CAPTURE --gdb 70000|--gdb 70000: not a port from 0 to 65535
replay CAPTURE --gdb host:|--gdb host:: not a port
replay CAPTURE --translated|--translated, --vmlinux and --checkpoint-every go with --gdb
replay CAPTURE --gdb 0 --tool icount|--gdb serves one view to gdb
replay CAPTURE --gdb 0 --checkpoint-every 1x|--checkpoint-every 1x: not a number
run CAPTURE --chain 1.5|kjit-sim run: --chain 1.5: not a number
run CAPTURE --code-bytes 4k|--code-bytes 4k: not a number
info CAPTURE --symbols|option '--symbols' requires an argument
sweep --limit 1x|kjit-sim sweep: --limit 1x: not a number
sweep stray|kjit-sim sweep: unexpected argument stray
kernel-diff --variants abc|kjit-sim kernel-diff: --variants abc: not a number
kernel-diff --seed 0x1g|--seed 0x1g: not a number
no-such-command|usage:
EOF_CASES
# What a good command line does: --budget in hex, the capture replayed.
out=$("$S" replay "$C" --budget 0x100000 2>&1); rc=$?
{ [ "$rc" = 0 ] && grep -q '^summary: ok' <<< "$out"; } || bad "replay $C --budget 0x100000: status $rc: $(tail -n 1 <<< "$out")"
warnings=$(groff -ww -z -man "$M" 2>&1)
[ -z "$warnings" ] || bad "groff warnings in $M: $warnings"
opts=$(grep -ohE '\{"[a-z][a-z-]*", (no|required)_argument' "$@" | sed 's/{"\([^"]*\)".*/\1/' | sort -u)
[ -n "$opts" ] || bad "no getopt tables found in $*"
for o in $opts; do
  grep -qF -- "\\-\\-${o//-/\\-}" "$M" || bad "$M does not name --$o"
done
for c in run replay info sweep kernel-diff; do
  grep -q "^\.B kjit-sim $c\$" "$M" || bad "$M has no synopsis of $c"
done
[ "$fail" = 0 ] && echo "kjit-sim-cli: ok ($(echo "$opts" | wc -w) options in the manual)"
exit "$fail"
