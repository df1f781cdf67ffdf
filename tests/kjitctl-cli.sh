#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjitctl's command line without the module: every command's --help exits 0
# with its own usage line, --version names the ABI, an unknown command is a
# usage error, record's and top's option errors are usage errors (2), and the
# man page renders without groff warnings.
# Usage: tests/kjitctl-cli.sh KJITCTL MANPAGE
set -uo pipefail
K="$1" M="$2"
fail=0
bad() { echo "kjitctl-cli: FAIL: $*" >&2; fail=1; }
# The commands are the ones `kjitctl --help` lists, so a new command is
# checked without editing this list; the few named below must be among them.
cmds=$("$K" --help | sed -n 's/^\(usage: \|       \)kjitctl \([a-z][a-z-]*\).*/\2/p' | sort -u)
for c in record report list attach kcov capture; do
  grep -qx "$c" <<< "$cmds" || bad "kjitctl --help does not list $c"
done
for c in $cmds; do
  out=$("$K" "$c" --help 2>&1); rc=$?
  [ "$rc" = 0 ] || bad "$c --help exits $rc"
  grep -q "^usage: kjitctl $c" <<< "$out" || bad "$c --help does not start with its usage: $(head -1 <<< "$out")"
done
"$K" --version | grep -q '^kjitctl [0-9][0-9.]* (ABI [0-9]*)$' || bad "--version: $("$K" --version 2>&1)"
"$K" --help | grep -q '^usage: kjitctl record' || bad "--help"
"$K" no-such-command > /dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || bad "an unknown command exits $rc, not 2"
# Option errors of record and top are usage errors (2, with the usage) before
# the module is asked anything: this host has no /dev/kjit.
for args in "record --bogus -a" "record -a -p 1" "record" "record --cpu 1,x -a" "record -C 100000 -a" \
            "record --tid 0 -a" "record --tid 5 -- true" "record --comm= -a" "record -c true -- true" \
            "top --bogus" "top -i 0" "top -n x" "top stray-argument" "top -a -p 1" "top --cpu 3-1"; do
  # shellcheck disable=SC2086  # the words of one command line
  out=$("$K" $args 2>&1 < /dev/null); rc=$?
  [ "$rc" = 2 ] || bad "kjitctl $args exits $rc, not 2: $(head -1 <<< "$out")"
  grep -q '/dev/kjit' <<< "$out" && bad "kjitctl $args opened the device before its options were checked"
done
out=$("$K" record --bogus -a 2>&1)
grep -q '^usage: kjitctl record' <<< "$out" || bad "record --bogus prints no usage: $out"
warnings=$(groff -ww -z -man "$M" 2>&1)
[ -z "$warnings" ] || bad "groff warnings in $M: $warnings"
MANWIDTH=80 man -l "$M" 2>/dev/null | grep -q 'kjitctl record' || bad "man -l $M does not render the record section"
[ "$fail" = 0 ] && echo "kjitctl-cli: PASS"
exit "$fail"
