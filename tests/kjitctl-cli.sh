#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjitctl's command line without the module: every command's --help exits 0
# with its own usage line, --version names the ABI, an unknown command is a
# usage error, kcov's attach-set options are checked before the device is
# opened, and the man page renders without groff warnings.
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
# kjitctl kcov parses its attach set before it opens /dev/kjit: a wrong
# command line is a usage error (2, with the usage) on any machine, saying
# what is wrong; a right one gets as far as the device.
kcov_usage() {
  local want="$1"; shift
  out=$("$K" kcov "$@" 2>&1); rc=$?
  { [ "$rc" = 2 ] && grep -q '^usage: kjitctl' <<< "$out" && grep -q -- "$want" <<< "$out"; } ||
    bad "kjitctl kcov $*: status $rc, not 2 with the usage and '$want': $(head -n 2 <<< "$out" | tr '\n' ' ')"
}
kcov_usage 'kjitctl kcov enable'
kcov_usage 'kjitctl kcov enable' frob
kcov_usage 'kjitctl kcov enable' enable disable
kcov_usage 'unknown option --bogus' enable --bogus
kcov_usage 'unknown option -x' enable -x
kcov_usage 'missing the argument of --attach' enable --attach
kcov_usage 'disable takes no options' disable --no-faults
kcov_usage 'disable takes no options' --attach 'tcp_*' disable
kcov_usage 'an empty attach set' enable --no-syscalls --no-faults
if [ ! -e /dev/kjit ]; then
  out=$("$K" kcov enable --no-faults --attach 'tcp_*' --attach openat 2>&1); rc=$?
  { [ "$rc" = 1 ] && grep -q '/dev/kjit' <<< "$out"; } ||
    bad "kjitctl kcov enable with a valid attach set and no kjit.ko: status $rc: $out"
else
  echo "kjitctl-cli: NOTE: /dev/kjit exists: a valid kcov command line is not run here"
fi
warnings=$(groff -ww -z -man "$M" 2>&1)
[ -z "$warnings" ] || bad "groff warnings in $M: $warnings"
MANWIDTH=80 man -l "$M" 2>/dev/null | grep -q 'kjitctl record' || bad "man -l $M does not render the record section"
[ "$fail" = 0 ] && echo "kjitctl-cli: PASS"
exit "$fail"
