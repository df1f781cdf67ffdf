# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# kjit-adapter.sh: the only place the bench knows kjit's control interface
# (sourced by driver.sh in the guest).
KJITCTL=/mnt/kjit/bin/kjitctl
KJIT_KO=/mnt/kjit/bin/kjit.ko

# kjit_load CACHE_KB|"" TOOL [liveness=0] [inline=0] [percpu_kb=N]
#           [follow_sleeps=0] [direct_entry=0] [trace_blocks=1] [abi_returns=0]
kjit_load() {
  local cache="$1" tool="$2" o
  shift 2
  local args=(--tool "$tool") params=()
  [ -z "$cache" ] || args+=(--cache-kb "$cache")
  for o in "$@"; do
    case "$o" in
      liveness=*) args+=(--liveness "${o#*=}") ;;
      inline=*) args+=(--inline "${o#*=}") ;;
      percpu_kb=*|follow_sleeps=*|direct_entry=*|trace_blocks=*|abi_returns=*) params+=("$o") ;;   # module parameters
    esac
  done
  insmod "$KJIT_KO" ${params[@]+"${params[@]}"} || return 1
  echo "kjitctl config ${args[*]}"
  "$KJITCTL" config "${args[@]}" || { rmmod kjit; return 1; }
  kjit_attach_syscalls
}
kjit_attach_syscalls() {
  local n=0 s
  for s in $SYSCALLS; do
    "$KJITCTL" attach "__x64_sys_$s" >/dev/null 2>>"$OUT/attach-errors.txt" && n=$((n + 1))
  done
  echo "kjit-adapter: attached $n system calls"
  [ "$n" -gt 0 ]
}
# kjit_kcov_load: the KCOV device (/sys/kernel/debug/kcov) over every system
# call and handle_mm_fault, as a fuzzer would use it
kjit_kcov_load() {
  insmod "$KJIT_KO" || return 1
  echo "kjitctl kcov enable"
  "$KJITCTL" kcov enable || { rmmod kjit; return 1; }
}
kjit_unload() { "$KJITCTL" detach all >/dev/null 2>&1; rmmod kjit; }
kjit_stats() { "$KJITCTL" stats; "$KJITCTL" departures; }   # departures: "reason count target"
kjit_flush() { "$KJITCTL" flush; }
# "0xADDR count symbol" lines: block starts (bbcount) / called functions (calltrace)
kjit_blocks() { "$KJITCTL" blocks; }
kjit_calls() { "$KJITCTL" calls; }
