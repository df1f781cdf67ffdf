# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Sourced by the guest scripts (busybox sh, cwd = the share): the CHECK
# lines the host reads, kjitctl helpers and console markers.
K=./kjitctl
pass() { echo "CHECK $1 PASS ${2:-}" | tee -a checks.txt; }
fail() { echo "CHECK $1 FAIL ${2:-}" | tee -a checks.txt; sync; }
chk() { name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
# Module load addresses on the console, for the host's hang dump
# (tools/lab/guest-hang-dump.py) to name addresses inside modules.
note_modules() {
  sed "s/^/module-text: /" /proc/modules
  # For the hang dump (tools/lab/guest-hang-dump.py): kjit names code-cache pcs.
  grep -w kjit_engine_original_pc_nowait /proc/kallsyms | sed "s/^/kjit-symbol: /"
}
stat_of() { $K stats | awk -v k="$1" '$1==k{print $2}'; }
# stats_grown BEFORE AFTER [KEYS]: "key=+N" for every `kjitctl stats`
# counter that grew from file BEFORE to file AFTER (KEYS: an awk regular
# expression the names must match; default all): where a window's calls went.
stats_grown() {
  awk -v keys="${3:-.}" 'FNR == NR && $2 ~ /^[0-9]+$/ {b[$1] = $2; next}
       $1 ~ keys && $2 ~ /^[0-9]+$/ && ($1 in b) && $2 > b[$1] {printf "%s=+%d ", $1, $2 - b[$1]}' "$1" "$2"
}
# covered_at_least CHECK STATS_FILE PCT: the share of the calls of the
# attached functions that entered the cache, from the "calls covered ...
# (N of M calls ...)" line of a `kjitctl stats` output, must be PCT% or
# more of M (PCT may have decimals: 99.9), with M > 0 (a count that stays
# 0 proves nothing).
covered_at_least() {
  cv_line=$(grep -m1 '^calls covered ' "$2")
  cv_n=$(echo "$cv_line" | sed -n 's/^calls covered [0-9.]*% (\([0-9]*\) of \([0-9]*\) calls .*/\1/p')
  cv_m=$(echo "$cv_line" | sed -n 's/^calls covered [0-9.]*% (\([0-9]*\) of \([0-9]*\) calls .*/\2/p')
  if [ -n "$cv_n" ] && [ -n "$cv_m" ] && [ "$cv_m" -gt 0 ] &&
     awk -v n="$cv_n" -v m="$cv_m" -v p="$3" 'BEGIN {exit !(n * 100 >= m * p)}'; then
    pass "$1" "$3% or more: $cv_line"
  else
    fail "$1" "want $3% or more: ${cv_line:-no calls covered line in $2}"
  fi
}

# config CHECK_NAME TOOL [CACHE_KB]: `kjitctl config`, then `kjitctl stats`
# must show the tool and the cache size (CACHE_KB 0 or none: the size the
# module was loaded with, BASE_CACHE_SIZE, read by config_base).
config_base() { BASE_CACHE_SIZE=$(stat_of cache_size); }
config() {
  c_name=$1 c_tool=$2 c_kb=${3:-0}
  if ! $K config --tool "$c_tool" --cache-kb "$c_kb" > config.txt 2>&1; then
    fail "$c_name" "kjitctl config --tool $c_tool --cache-kb $c_kb: $(tr '\n' ' ' < config.txt)"
    return 1
  fi
  c_want=$((c_kb * 1024)); [ "$c_kb" != 0 ] || c_want=${BASE_CACHE_SIZE:-?}
  c_got_tool=$(stat_of tool); c_got_size=$(stat_of cache_size)
  if [ "$c_got_tool" = "$c_tool" ] && [ "$c_got_size" = "$c_want" ]; then
    pass "$c_name" "tool $c_got_tool cache_size $c_got_size"
  else
    fail "$c_name" "stats show tool $c_got_tool cache_size $c_got_size, want $c_tool $c_want"
    return 1
  fi
}

# The end of a guest script: the kernel log and taint the host judges
# (tests/guest/verdict.sh reads dmesg.txt and tainted.txt), then the DONE
# marker.  A script that goes on to do something deliberate that the log
# or the taint would show (a WARN) calls log_snapshot before it, and
# guest_done keeps that snapshot.
log_snapshot() {
  dmesg > dmesg.txt
  cat /proc/sys/kernel/tainted > tainted.txt
  LOG_SNAPSHOT=1
}
guest_done() {
  [ "${LOG_SNAPSHOT:-0}" = 1 ] || log_snapshot
  sync
  echo "$1"
  sync
}
