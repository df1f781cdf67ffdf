#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `kjitctl list` without kjit.ko, on a kernel of the test's making
# ($KJITCTL_SYSROOT): the pinned kernel's kallsyms (tests/data, ~146,000
# symbols) and an available_filter_functions of its text symbols, no
# /dev/kjit.  It lists the candidates ('*' by default, several globs once
# each), marks the functions in kjit's never-instrumented text areas as
# refused (those of noinstr and entry text, from kallsyms) and the kprobes
# blacklist's (debugfs), says it lists candidates, and fails with a clear
# message when tracefs is unreadable.
# Usage: tests/kjitctl-list-offline.sh KJITCTL KALLSYMS.xz
set -uo pipefail
K="$1" KS="$2"
fail=0
bad() { echo "kjitctl-list-offline: FAIL: $*" >&2; fail=1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/proc" "$root/sys/kernel/tracing" "$root/sys/kernel/debug/kprobes"
xz -dc "$KS" > "$root/proc/kallsyms"
# ftrace lists functions, not system call wrappers (kjitctl adds those from
# kallsyms) nor the padding before functions (__pfx_, 6.12); one name twice,
# as tracefs lists static functions of one name
awk '$2 ~ /^[tT]$/ && $3 !~ /^__x64_sys_/ && $3 !~ /^__pfx_/ && $3 !~ /^__(noinstr|entry|kprobes|irqentry|softirqentry)_text_/ {print $3}' \
  "$root/proc/kallsyms" > "$root/sys/kernel/tracing/available_filter_functions"
echo "vfs_read" >> "$root/sys/kernel/tracing/available_filter_functions"
printf '0xffffffff81100000-0xffffffff81100010\tdo_int3\n' > "$root/sys/kernel/debug/kprobes/blacklist"
export KJITCTL_SYSROOT="$root"

t0=$(date +%s%N)
"$K" list > "$root/all.txt" 2> "$root/all.err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$rc" = 0 ] || bad "list exits $rc: $(cat "$root/all.err")"
n=$(wc -l < "$root/all.txt")
[ "$n" -gt 40000 ] || bad "only $n candidates listed"
[ "$(sort "$root/all.txt" | uniq -d | wc -l)" = 0 ] || bad "names listed twice: $(sort "$root/all.txt" | uniq -d | head -3)"
if ! grep -q 'not loaded' "$root/all.err" || ! grep -q 'candidates' "$root/all.err"; then
  bad "stderr does not say it lists candidates: $(cat "$root/all.err")"
fi
grep -qx 'vfs_read' "$root/all.txt" || bad "vfs_read is not a candidate"
grep -qx '__x64_sys_openat' "$root/all.txt" || bad "__x64_sys_openat (from kallsyms) is not a candidate"
# noinstr: a function between __noinstr_text_start and _end
noinstr=$(awk '$3 == "__noinstr_text_start" { lo = $1 } $3 == "__noinstr_text_end" { hi = $1 }
               END { print lo, hi }' "$root/proc/kallsyms")
read -r lo hi <<< "$noinstr"
inside=$(awk -v lo="$lo" -v hi="$hi" '$2 ~ /^[tT]$/ && $1 >= lo && $1 < hi && $3 !~ /^__(noinstr|pfx_)/ { print $3; exit }' "$root/proc/kallsyms")
[ -n "$inside" ] || bad "no function in noinstr text to check"
grep -qx "$inside refused: never instrumented (noinstr text)" "$root/all.txt" || bad "$inside (noinstr) is not refused: $(grep "^$inside" "$root/all.txt")"
grep -qx 'do_int3 refused: never instrumented (kprobes blacklist)' "$root/all.txt" || bad "do_int3 (blacklist) is not refused"
grep -q '^vfs_read refused' "$root/all.txt" && bad "vfs_read refused"

# several globs, overlapping: each match once
"$K" list 'vfs_read*' 'vfs_*' > "$root/vfs.txt" 2> "$root/vfs.err" || bad "list 'vfs_read*' 'vfs_*': $(cat "$root/vfs.err")"
[ "$(wc -l < "$root/vfs.txt")" = "$(grep -c '^vfs_' "$root/all.txt")" ] || bad "two globs: $(wc -l < "$root/vfs.txt") lines, '*' has $(grep -c '^vfs_' "$root/all.txt") vfs_"
[ "$(head -1 "$root/vfs.txt" | cut -d' ' -f1)" = vfs_read ] || bad "first glob's matches not first: $(head -1 "$root/vfs.txt")"
"$K" list 'no_such_fn_*' > /dev/null 2>&1 && bad "a glob matching nothing exits 0"

# no tracefs: a clear error
rm "$root/sys/kernel/tracing/available_filter_functions"
err=$("$K" list 'vfs_*' 2>&1 > /dev/null) && bad "list without tracefs exits 0"
grep -q "neither .*available_filter_functions nor .*available_filter_functions is readable" <<< "$err" || bad "no clear error without tracefs: $err"

[ "$fail" = 0 ] && echo "kjitctl-list-offline: PASS ($n candidates in $ms ms, $(grep -c refused "$root/all.txt") refused)"
exit "$fail"
