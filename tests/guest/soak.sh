#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Long soak of kjit under stress-ng (not part of ./kjit-lab test): every
# system call attached, tools and cache sizes rotated, multi-threaded TCG,
# one boot per preemption mode.  Fails on any kernel-log error or any
# stressor that fails under kjit but passed natively in the same boot.
# Usage: tests/guest/soak.sh BUILD_DIR [MINUTES_PER_MODE]   (default 30)
# Env: KJIT_SOAK_MODES (tools/lab/preempt-modes.sh: "voluntary full", "rt"), KJIT_SOAK_SECS (2).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
MIN="${2:-30}"
host_kjit soak
# stress-ng classes os, filesystem, pipe, memory and scheduler, a few
# stressors of each that run in the lab's busybox guest.
STRESSORS="fork clone get kill prctl sigsegv dentry dir open rename fstat link lockf flock \
pipe pipeherd fifo malloc mmap brk memfd yield switch futex nanosleep clock timer"
verdict_begin soak
for mode in ${KJIT_SOAK_MODES:-$("$root/tools/lab/preempt-modes.sh")}; do
  share="$B/guest-soak-$mode"
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  share_stress_ng "$share" || exit 2
  share_script "$share" "$root/tests/guest/soak-guest.sh" \
    MINUTES="$MIN" SECS="${KJIT_SOAK_SECS:-2}" STRESSORS="$STRESSORS" \
    TOOLS="icount bbcount calltrace lock_contention" CACHES="64 256 1024 4096"
  echo "soak: $mode preemption, $MIN minutes"
  rc=0
  append="$("$root/tools/lab/preempt-modes.sh" --append "$mode")"
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --mem 1024 \
     --timeout $((MIN * 60 + 1200)) ${append:+--append "$append"} || rc=$?
  # no checks.txt: soak.txt holds the runs, judged below
  verdict_status "$share" "$rc" "$mode"
  verdict_done "$share" SOAK-GUEST-DONE "$mode"
  verdict_kernel_log "$share" "$mode"
  verdict_taint "$share" "$mode"
  # A stressor failing under kjit counts only if it passed natively.
  bad=$(awk '$1=="native"{nat[$2]=$3} $1=="run" && $6!=0 && nat[$5]==0 {print}' "$share/soak.txt")
  runs=$(awk '$1=="run"{r[$2]=1} END{print length(r)}' "$share/soak.txt")
  nat_fail=$(awk '$1=="native" && $3!=0 {printf "%s ", $2}' "$share/soak.txt")
  recl=$(awk '$1=="stats" && $3=="reclaims"{s+=$4} END{print s+0}' "$share/soak.txt")
  echo "soak: $mode: $runs configurations, $recl reclaims, native failures: ${nat_fail:-none}"
  [ -z "$bad" ] || { verdict_bad "stressors failing under kjit only ($mode):"; echo "$bad" >&2; }
  grep -q '^rmmod 0' "$share/soak.txt" || verdict_bad "rmmod ($mode)"
done
verdict_end; exit $?
