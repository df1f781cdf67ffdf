#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/capture-suite.sh.
# Preamble parameters: SYSCALLS (system calls to capture: NAME, or CASE=NAME
# for capture_workload's CASE making system call NAME), ALL_WORKLOADS
# (DIR=COMMAND entries, `+` for spaces: each is captured with
# `kjitctl capture --all-syscalls -o caps/DIR -- COMMAND`), ALL_TIMEOUT
# (seconds per such capture), ALL_FLAGS (more kjitctl capture options for
# them, e.g. --all-code), OVERHEAD_SYSCALLS (system calls whose
# recording overhead is measured).
# Writes caps/CASE.kjitcap and caps/CASE.log per entry, caps/DIR/*.kjitcap
# and caps/DIR.log per workload; a step that must not fail prints
# "CAPTURE-FAIL step", which fails the host.
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
# Recording instruments every block, and an entry the engine declines runs
# natively, unrecorded: the host fails the all-syscalls capture on any entry
# declined while the whole cache waited for a reclaim.  The largest code
# cache the module has (KJIT_CACHE_MAX, 8 MiB): broad_workload's capture
# still fills its 4 MiB halves (each fill hands translation to the other
# half), and the static keys the workload flips retire the active half too;
# a retirement while the other half awaits its reclaim starts a new
# generation in the active one (core/epoch.h) rather than stopping
# translation.
insmod ./kjit.ko cache_kb=8192 || { echo CAPTURE-FAIL insmod; exit 1; }
for e in $SYSCALLS; do
  s="${e%%=*}"
  sys="${e#*=}"
  echo "== $s"
  : > "caps/$s.log"
  for try in 1 2 3; do
    ./kjitctl capture --syscall "$sys" --count 4 --first-complete -o "caps/$s.kjitcap" -- ./capture_workload "$s" 4 >> "caps/$s.log" 2>&1
    rc=$?
    echo "try $try rc $rc" >> "caps/$s.log"
    [ $rc = 0 ] && break
  done
  cat "caps/$s.log"
  sync
done
# One complete invocation of every system call each workload makes.
for w in $ALL_WORKLOADS; do
  d="${w%%=*}"
  cmd=$(echo "${w#*=}" | tr + ' ')
  echo "== all-syscalls $d: $cmd"
  mkdir -p "caps/$d"
  # A new engine: both halves of the cache empty, not holding what the
  # captures before built, so the workload's own code fits without a
  # reclaim (the host fails on an entry declined during one).
  ./kjitctl config --tool none --cache-kb 0 > /dev/null || echo "CAPTURE-FAIL config before $d"
  # shellcheck disable=SC2086 # cmd is a command line
  # shellcheck disable=SC2086 # ALL_FLAGS are options
  ./kjitctl capture --all-syscalls -o "caps/$d" --timeout "$ALL_TIMEOUT" ${ALL_FLAGS:-} -- $cmd > "caps/$d.log" 2>&1
  echo "rc $?" >> "caps/$d.log"
  # How full the cache got and whether it was reclaimed (the host prints
  # it; text_flushes counts from the load, the others from the config).
  ./kjitctl stats | awk '$1 ~ /^(cache_size|cache_bytes_used|arena_bytes_used|blocks_built|reclaims|flushes|generations|entry_declined|calls_declined_cache_full|calls_declined_unbuilt|text_flushes)$/ {
    printf "%s%s=%s", (n++ ? " " : "engine: "), $1, $2 } END { print "" }' >> "caps/$d.log"
  grep -v "kjitcap: wrote" "caps/$d.log"
  sync
done
# Recording overhead: 300 invocations natively, attached with no tool, and
# every one of them recorded (one file written; time per invocation after
# 30 warm-up ones, printed by the workload).  Reported, not checked.
for s in $OVERHEAD_SYSCALLS; do
  ./capture_workload "$s" 300 2>&1 >/dev/null | sed "s/^time/overhead native/"
  ./kjitctl config --tool none >/dev/null && ./kjitctl attach "__x64_sys_$s" >/dev/null
  ./capture_workload "$s" 300 2>&1 >/dev/null | sed "s/^time/overhead attached/"
  ./kjitctl detach all >/dev/null
  ./kjitctl capture --syscall "$s" --count 300 --buf-kb 16384 --first-complete -o /tmp/ovh.kjitcap -- ./capture_workload "$s" 300 2>&1 \
    | grep -E "^time|invocation\(s\) written" | sed -e "s/^time/overhead capturing/" -e "s/^capture /overhead capture /"
  rm -f /tmp/ovh.kjitcap*
done
rmmod kjit || echo CAPTURE-FAIL rmmod
guest_done CAPTURE-GUEST-DONE
