#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjitctl's command line without the module: every command's --help exits 0
# with its own usage line, --version names the ABI, an unknown command and
# junk arguments to every command are usage errors, record's and top's
# option values and kcov's attach-set options are checked before the device
# is opened, and the man page renders without groff warnings.
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
"$K" --version | grep '^kjitctl [0-9][0-9.]* (ABI [0-9]*)$' >/dev/null || bad "--version: $("$K" --version 2>&1)"
"$K" --help | grep '^usage: kjitctl record' >/dev/null || bad "--help"
"$K" no-such-command > /dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || bad "an unknown command exits $rc, not 2"
# Junk arguments are usage errors (exit 2, the command's usage on stderr)
# before kjitctl looks for /dev/kjit: unknown options, options without
# their value, operands a command does not take or misses, values that are
# not numbers where numbers go, a tool given by number.
# "CMD ARGS...|what stderr must say"
while IFS='|' read -r args says; do
  read -ra av <<< "$args"
  err=$("$K" "${av[@]}" 2>&1 > /dev/null); rc=$?
  [ "$rc" = 2 ] || bad "kjitctl $args exits $rc, not 2: $err"
  grep -q "^usage: kjitctl ${av[0]}" <<< "$err" || bad "kjitctl $args: no usage of ${av[0]}: $err"
  grep -qF -- "$says" <<< "$err" || bad "kjitctl $args does not say '$says': $err"
done <<'EOF_CASES'
show --junk|unknown option --junk
show extra|unexpected extra
show -x|unknown option -x
config --inline|--inline needs a value
config --bogus 1|unknown option --bogus
config stray|unexpected stray
stats --json|unknown option --json
stats now|unexpected now
flush -f|unknown option -f
reset all|unexpected all
icount-reset --all|unknown option --all
blocks --folded|unknown option --folded
calls --all|unknown option --all
departures --trace|unknown option --trace
detach|missing operand
detach openat read|unexpected read
list --json|unknown option --json
attach --batch|--batch needs a value
attach -x openat|unknown option -x
record -t|-t needs a value
record --no-such -- true|unknown option --no-such
capture -o|-o needs a value
capture --bogus|unknown option --bogus
config --cache-kb 12abc|--cache-kb 12abc: not a number
config --liveness 2|--liveness 2: not a number from 0 to 1
config --tool 2|a tool is named, not numbered
record -t 2 -c true|a tool is named, not numbered
record --tool=nosuch -c true|unknown tool nosuch
capture --syscall getppid --count 3x -- true|--count 3x: not a number
EOF_CASES
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
# Without /dev/kjit, kjitctl says why from the machine's files (a made-up
# machine under KJITCTL_SYSROOT), one state after the other.
sr="$(mktemp -d)"; trap 'rm -rf "$sr"' EXIT
rel=6.12.9-cloud-amd64
mkdir -p "$sr/proc/sys/kernel" "$sr/boot"; echo "$rel" > "$sr/proc/sys/kernel/osrelease"
why() {  # WANT STEP: after STEP (run in the made-up root), kjitctl stats says WANT
  (cd "$sr" && eval "$2")
  out=$(KJITCTL_SYSROOT="$sr" "$K" stats 2>&1); rc=$?
  if [ "$rc" != 1 ] || ! grep -q -- "$1" <<< "$out"; then bad "no /dev/kjit, after '$2': exit $rc, not '$1': $out"; fi
}
why 'kjit-dkms is not installed' true
why "the kernel lacks CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS CONFIG_RETPOLINE" \
  "mkdir -p var/lib/dkms/kjit/0.2.0/build; printf 'CONFIG_KALLSYMS=y\nCONFIG_KPROBES=y\nCONFIG_DYNAMIC_FTRACE_WITH_REGS=y\n' > boot/config-$rel"
why "DKMS has no headers for $rel.*linux-headers-cloud-amd64" \
  "printf 'CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y\nCONFIG_MITIGATION_RETPOLINE=y\n' >> boot/config-$rel"
why "DKMS has not built kjit for $rel" "mkdir -p lib/modules/$rel/build"
why "see /var/lib/dkms/kjit/0.2.0/build/make.log" "touch var/lib/dkms/kjit/0.2.0/build/make.log"
why "kjit.ko.xz is installed for $rel: modprobe kjit" "mkdir -p lib/modules/$rel/updates/dkms; touch lib/modules/$rel/updates/dkms/kjit.ko.xz"
# kcov enable under lockdown: debugfs would refuse the device; said first.
mkdir -p "$sr/sys/kernel/security"
echo 'none [integrity] confidentiality' > "$sr/sys/kernel/security/lockdown"
out=$(KJITCTL_SYSROOT="$sr" "$K" kcov enable 2>&1); rc=$?
if [ "$rc" != 1 ] || ! grep -q 'lockdown is on (integrity): debugfs refuses' <<< "$out"; then bad "kcov enable under lockdown: exit $rc: $out"; fi
echo '[none] integrity confidentiality' > "$sr/sys/kernel/security/lockdown"
out=$(KJITCTL_SYSROOT="$sr" "$K" kcov enable 2>&1)
if grep -q 'lockdown' <<< "$out"; then bad "kcov enable without lockdown names it: $out"; fi
warnings=$(groff -ww -z -man "$M" 2>&1)
[ -z "$warnings" ] || bad "groff warnings in $M: $warnings"
MANWIDTH=80 man -l "$M" 2>/dev/null | grep 'kjitctl record' >/dev/null || bad "man -l $M does not render the record section"
[ "$fail" = 0 ] && echo "kjitctl-cli: PASS"
exit "$fail"
