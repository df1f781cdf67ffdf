#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/exact-smp.sh.
# Preamble parameters: N (umask calls per CPU), TOOLS (built-in tools to
# check, e.g. "icount bbcount bbcount_blocks": bbcount_blocks is the sum of
# bbcount's per-block counters, which must not drop anything), WINDOWS (insmod
# parameters, one word per load: "default", or parameters joined by '+' such
# as percpu_kb=32+bb_max=1024).
# For each tool: the count of one umask alone (C1), then N calls on one
# CPU (must be N*C1: the call is deterministic, smp_race.c), then N calls on
# each of two CPUs at once (must be 2N*C1: no increment lost).  umask is attached
# before any of it, so no kernel text is patched while both vCPUs run.
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
step() { echo "<2>kjit-exact: $*" > /dev/kmsg 2>/dev/null; echo "== $*"; }

# count TOOL: the tool's total since the last reset
count() {
  case $1 in
    icount) $K show | awk '$1=="instructions"{print $2}' ;;
    bbcount) $K show | sed -n 's/^tool bbcount: blocks executed \([0-9]*\),.*/\1/p' ;;
    # the per-block counters, summed (the tool is bbcount)
    bbcount_blocks) $K blocks | awk '$1 ~ /^0x/ {s += $2} $1=="dropped" && $2 != 0 {bad=1}
                                     END {if (!bad) print s + 0}' ;;
  esac
}
# run TOOL CALLS THREADS: reset, run smp_race, print the count
run() {
  $K reset || return 1
  ./smp_race "$2" "$3" > race.txt || return 1
  count "$1"
}

# Kernel text changes (insmod's probes and static keys, attach, detach,
# rmmod) are made with vCPU 1 offline: this test boots multi-threaded TCG,
# and QEMU 7.2 there can keep executing the int3 of a text_poke_bp on the
# other vCPU after the patch is done (both vCPUs then trap for ever at
# __schedule).  It comes back for the runs that need it.
cpu1() { echo "$1" > /sys/devices/system/cpu/cpu1/online 2>/dev/null || true; }

# Both per-CPU windows: the default static one (gs:disp32) and a dynamic
# __alloc_percpu block (beyond disp32 on this kernel: through a register).
for load in $WINDOWS; do
  # one word per load: parameters joined by '+'; the label keeps the values
  params=$(echo "$load" | tr + ' ')
  w=$(echo "$load" | sed 's/percpu_kb=//; s/+bb_max=/_bb/')
  [ "$load" != default ] || { params=""; w=static; }
  cpu1 0
  # shellcheck disable=SC2086  # params is one word or none
  insmod ./kjit.ko $params || { fail "insmod_$w"; cpu1 1; continue; }
  note_modules
  dmesg | grep 'per-CPU window' | tail -n1
  config_base
  for tool in $TOOLS; do
    step "$tool, window $w"
    cpu1 0
    config "config_${tool}_$w" "${tool%_blocks}" || continue
    $K attach umask > /dev/null || { fail "attach_${tool}_$w"; continue; }
    cpu1 1
    # Translate the path first: the counts below are of steady-state runs.
    run "$tool" 100 1 > /dev/null
    c1=$(run "$tool" 1 1); c1b=$(run "$tool" 1 1)
    if [ "${c1:-0}" -gt 0 ] && [ "$c1" = "$c1b" ]; then
      pass "${tool}_${w}_single" "one umask counts $c1"
    else
      fail "${tool}_${w}_single" "one umask counts ${c1:-?} then ${c1b:-?}"
      cpu1 0; $K detach all > /dev/null; continue
    fi
    alone=$(run "$tool" "$N" 1)
    if [ "${alone:-0}" = $((N * c1)) ]; then
      pass "${tool}_${w}_one_cpu" "$N calls: $alone = $N x $c1"
    else
      fail "${tool}_${w}_one_cpu" "$N calls: ${alone:-?}, want $((N * c1))"
    fi
    both=$(run "$tool" "$N" 2)
    want=$((2 * N * c1))
    ov=$(awk '$1=="overlap"{print $2}' race.txt)
    if [ "${ov:-0}" -lt 50 ]; then
      # The loops hardly ran at once: equality would prove nothing.
      fail "${tool}_${w}_two_cpus" "the two loops overlapped ${ov:-?}% (need 50%); count ${both:-?}, want $want"
    elif [ "${both:-0}" = "$want" ]; then
      pass "${tool}_${w}_two_cpus" "2 x $N concurrent calls (${ov}% overlap): $both = 2 x $N x $c1"
    else
      fail "${tool}_${w}_two_cpus" "2 x $N concurrent calls (${ov}% overlap): ${both:-?}, want $want (lost $((want - ${both:-0})))"
    fi
    if [ "$tool" = bbcount_blocks ]; then
      # where the per-block counters live: per-CPU only where bb_max of them fit
      storage=$($K show | sed -n 's/^tool bbcount:.*counters [0-9]* (\([^)]*\)).*/\1/p')
      case "$w" in *_bb*) want_storage=per-CPU ;; *) want_storage="locked adds" ;; esac
      if [ "$storage" = "$want_storage" ]; then pass "bbcount_storage_$w" "$storage"
      else fail "bbcount_storage_$w" "per-block counters: ${storage:-?}, want $want_storage"; fi
    fi
    $K stats > "stats-$tool-$w.txt"
    cpu1 0
    $K detach all > /dev/null
  done
  cpu1 0
  if rmmod kjit; then pass "rmmod_$w"; else fail "rmmod_$w"; fi
  cpu1 1
done
guest_done EXACT-GUEST-DONE
