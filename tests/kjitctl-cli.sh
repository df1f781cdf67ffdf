#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjitctl's command line without the module: every command's --help exits 0
# with its own usage line, --version names the ABI, an unknown command is a
# usage error, and the man page renders without groff warnings.
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
warnings=$(groff -ww -z -man "$M" 2>&1)
[ -z "$warnings" ] || bad "groff warnings in $M: $warnings"
MANWIDTH=80 man -l "$M" 2>/dev/null | grep -q 'kjitctl record' || bad "man -l $M does not render the record section"
[ "$fail" = 0 ] && echo "kjitctl-cli: PASS"
exit "$fail"
