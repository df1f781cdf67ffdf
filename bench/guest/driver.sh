#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench driver, run in the guest's Debian root (cwd /mnt/kjit = the share).
# config.env sets CONFIG, REPS, SECS (lmb budget per benchmark), MACRO_SECS.
# For each repetition: the native run, then the configuration's run, in this
# boot; output under out/CONFIG/: repN-native.txt, repN-config.txt (lmb lines
# and "lmb-exit N", "macro rps X", "macro errors ..."),
# repN-stats-{micro,macro-cold,macro}.txt (kjitctl stats / probe stats),
# setup.log, dmesg.txt (the whole kernel log) and discovery lists.
set -u
cd /mnt/kjit || exit 1
export PATH=/mnt/kjit/bin:/usr/sbin:/usr/bin:/sbin:/bin
# shellcheck source=/dev/null  # written by bench/guest/run.sh for each boot
. ./config.env
# shellcheck source=bench/guest/kjit-adapter.sh
. ./kjit-adapter.sh
OUT="out/$CONFIG"; mkdir -p "$OUT"
log() { echo "bench[$CONFIG]: $*"; echo "$*" >> "$OUT/setup.log"; }
# The whole kernel log, however the driver ends: the analysis runs the lab's
# kernel-log checker on it, and a WARN splat does not reach the quiet console.
save_dmesg() { dmesg > "$OUT/dmesg.txt" 2>&1; sync; }
trap save_dmesg EXIT

# System calls the workloads make (strace of lmb; nginx + wrk).  kjit attaches
# to these __x64_sys_* wrappers; the per-syscall kprobes go on the same ones.
SYSCALLS="getppid getpid read write newfstatat newfstat openat close pselect6 select
 rt_sigaction kill clone wait4 pipe2 execve
 accept4 recvfrom sendto sendfile64 writev readv epoll_wait epoll_ctl connect socket
 setsockopt getsockopt shutdown fcntl ioctl getsockname"

# --- workloads -------------------------------------------------------------
mkdir -p /tmp/www /tmp/nginx
head -c 1024 /dev/zero | tr '\0' 'k' > /tmp/www/f.html
cat > /tmp/nginx/nginx.conf <<NGX
user root; worker_processes 1; daemon on; pid /tmp/nginx/pid;
error_log /tmp/nginx/error.log;
events { worker_connections 256; }
http { access_log off; sendfile on;
  client_body_temp_path /tmp/nginx/b; proxy_temp_path /tmp/nginx/p;
  fastcgi_temp_path /tmp/nginx/f; uwsgi_temp_path /tmp/nginx/u; scgi_temp_path /tmp/nginx/s;
  server { listen 127.0.0.1:8080; root /tmp/www; } }
NGX
nginx -c /tmp/nginx/nginx.conf || log "nginx failed to start"
sleep 1

# KCOV_MICRO: lmb's -k mode in the configuration's run (kjit-kcov-pc/cmp)
KCOV_MICRO=""
# lmb stops at its first failure, and fork and exec come last: its exit
# status ("lmb-exit N") tells the analysis a row is not to be judged.
micro() {
  lmb -t "$SECS" -x /mnt/kjit/bin/lmb-hello -f /etc/passwd ${KCOV_MICRO:+-k "$KCOV_MICRO"}
  echo "lmb-exit $?"
}
# macro LABEL: one wrk run, printed as "LABEL rps X".  Each run measures it
# twice, "macro-cold" then "macro": in kjit's run the first starts from an
# empty code cache and pays for building it, the second runs from the cache
# the first built; native runs it twice too, so both compare like with like.
# wrk's error lines (socket errors and timeouts, non-2xx responses) and its
# own failure become "LABEL errors ...": the analysis refuses such a row.
macro() {
  local out rc
  out="$(wrk -t1 -c4 -d"${MACRO_SECS}s" http://127.0.0.1:8080/f.html 2>&1)"; rc=$?
  printf '%s\n' "$out" | awk -v l="$1" '/Requests\/sec/ {print l, "rps", $2}
    /Socket errors|Non-2xx/ {sub(/^[ \t]+/, ""); print l, "errors", $0}'
  [ "$rc" = 0 ] || echo "$1 errors wrk exited $rc: $(printf '%s\n' "$out" | head -n 1)"
}
workload_short() { lmb -t 0.02 -x /mnt/kjit/bin/lmb-hello -f /etc/passwd >/dev/null;
                   wrk -t1 -c2 -d1s http://127.0.0.1:8080/f.html >/dev/null 2>&1; }

# --- configurations --------------------------------------------------------
# setup_CONFIG / teardown; stats_snapshot FILE; mid_flush (between micro and
# macro, so code-cache bytes are per workload).
BPF_PID="" HOLD_PID=""
setup() {
  case "$CONFIG" in
    native) ;;
    kjit-none)            kjit_load "" none ;;
    kjit-none-nofollow)   kjit_load "" none follow_sleeps=0 ;;
    kjit-none-ipmodify)   kjit_load "" none direct_entry=0 ;;
    kjit-none-notrace)    kjit_load "" none trace_blocks=1 ;;
    kjit-none-stackret)   kjit_load "" none abi_returns=0 ;;
    kjit-syscount)        kjit_load "" entry_count ;;
    kjit-calltrace)       kjit_load "" calltrace ;;
    kjit-bbcount)         kjit_load "" bbcount ;;
    kjit-bb-notrace)      kjit_load "" bbcount trace_blocks=1 ;;
    kjit-icount)          kjit_load "" icount ;;
    kjit-icount-dynpcpu)  kjit_load "" icount percpu_kb=16 ;;
    kjit-bb-noliveness)   kjit_load "" bbcount liveness=0 ;;
    kjit-bb-noinline)     kjit_load "" bbcount inline=0 ;;
    kjit-bb-noopt)        kjit_load "" bbcount liveness=0 inline=0 ;;
    kjit-cache*)          kjit_load "${CONFIG#kjit-cache}" bbcount ;;
    kjit-bb-switching)    kjit_load "" bbcount && SWITCHES_AT_LOAD=$(switches) &&
                          FLUSHES_AT_LOAD=$("$KJITCTL" stats | awk '$1 == "flushes" {print $2}') ;;
    kjit-kcov-pc)         kjit_kcov_load && KCOV_MICRO="pc" ;;
    kjit-kcov-cmp)        kjit_kcov_load && KCOV_MICRO="cmp" ;;
    kjit-kcov-beside)
      # a covered process blocked in pause() for the whole run: the workloads
      # run uncovered beside it and pay only kjit's entry filter
      kjit_kcov_load || return 1
      lmb -k hold > "$OUT/kcov-hold.txt" 2>&1 &
      HOLD_PID=$!
      for _ in $(seq 1 100); do grep -q ready "$OUT/kcov-hold.txt" && break; sleep 0.1; done
      grep -q ready "$OUT/kcov-hold.txt" || { log "kcov holder: $(cat "$OUT/kcov-hold.txt")"; return 1; }
      log "kcov holder $HOLD_PID covered" ;;
    kprobe-sys)           kprobe_load "$OUT/addr-sys.txt" ;;
    kprobe-call)          kprobe_load "$OUT/addr-call.txt" ;;
    kprobe-bb)            kprobe_load "$OUT/addr-bb.txt" ;;
    ftrace-func)
      T=/sys/kernel/tracing
      echo 0 > $T/tracing_on; echo > $T/trace
      if [ -s "$OUT/funcs-call.txt" ]; then
        cat "$OUT/funcs-call.txt" > $T/set_ftrace_filter 2>>"$OUT/setup.log" || true
      fi
      log "ftrace filter: $(wc -l < $T/set_ftrace_filter) functions"
      echo function > $T/current_tracer; echo 1 > $T/tracing_on ;;
    bpftrace)
      bpftrace -e 'tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }' \
        > "$OUT/bpftrace.out" 2>&1 &
      BPF_PID=$!
      for _ in $(seq 1 600); do
        grep -q Attaching "$OUT/bpftrace.out" 2>/dev/null && break; sleep 0.5
      done
      sleep 1
      log "bpftrace: $(head -n1 "$OUT/bpftrace.out")" ;;
    *) log "unknown config"; return 1 ;;
  esac
}
teardown() {
  case "$CONFIG" in
    native) ;;
    kjit-kcov-*) KCOV_MICRO=""
                 if [ -n "$HOLD_PID" ]; then kill "$HOLD_PID"; wait "$HOLD_PID"; HOLD_PID=""; fi
                 kjit_unload ;;
    kjit-*) kjit_unload ;;
    kprobe-*) rmmod kprobench ;;
    ftrace-func) T=/sys/kernel/tracing; echo 0 > $T/tracing_on; echo nop > $T/current_tracer
                 echo > $T/set_ftrace_filter; echo > $T/trace ;;
    bpftrace) kill -INT "$BPF_PID"; wait "$BPF_PID" ;;
  esac
}
stats_snapshot() {
  case "$CONFIG" in
    kjit-bb-switching) { kjit_stats; echo "switches $(( $(switches) - SWITCHES_AT_LOAD ))"
                         echo "load_flushes $FLUSHES_AT_LOAD"; } > "$1" 2>&1 ;;
    kjit-*) kjit_stats > "$1" 2>&1 ;;
    kprobe-*) cat /sys/kernel/debug/kprobench/stats > "$1" ;;
    ftrace-func) grep -E 'entries-in-buffer|^# entries' /sys/kernel/tracing/trace | head -2 > "$1" ;;
    *) : > "$1" ;;
  esac
}
kprobe_load() {
  insmod /mnt/kjit/bin/kprobench.ko || return 1
  cat "$1" > /sys/kernel/debug/kprobench/probes
  echo "kprobench: $(tr '\n' ' ' < /sys/kernel/debug/kprobench/stats) from $(wc -l < "$1") addresses"
}
mid_flush() { case "$CONFIG" in kjit-*) kjit_flush ;; esac; }

# --- a busy tracer (kjit-bb-switching) ---------------------------------------
# A trace instance's function tracer on every function, switched on and off
# once a second for the whole boot, native runs included; the flushes the
# load made (a tool configured) are noted; $OUT/switches counts the on/off
# pairs, replaced whole (a rename) so that a reader never
# sees it empty.
TI=/sys/kernel/tracing/instances/kjitbench SWITCHER_PID="" SWITCHES_AT_LOAD=0 FLUSHES_AT_LOAD=0
switches() { cat "$OUT/switches" 2>/dev/null || echo 0; }
switcher_start() {
  mkdir "$TI" || return 1
  echo 0 > "$OUT/switches"
  ( n=0
    while :; do
      echo function > "$TI/current_tracer"; sleep 0.5
      echo nop > "$TI/current_tracer"; sleep 0.5
      n=$((n + 1)); echo "$n" > "$OUT/switches.new" && mv "$OUT/switches.new" "$OUT/switches"
    done ) &
  SWITCHER_PID=$!
  log "switcher $SWITCHER_PID: the function tracer of $TI on and off once a second"
}
switcher_stop() {
  [ -n "$SWITCHER_PID" ] || return 0
  kill "$SWITCHER_PID"; wait "$SWITCHER_PID" 2>/dev/null
  echo nop > "$TI/current_tracer"; rmdir "$TI"
  log "switcher stopped after $(switches) switches"
}

# --- probe addresses, discovered by kjit itself ------------------------------
discover() {
  case "$CONFIG" in
    kprobe-sys)
      for s in $SYSCALLS; do grep -q " __x64_sys_$s\$" /proc/kallsyms && echo "__x64_sys_$s"; done \
        > "$OUT/addr-sys.txt" ;;
    kprobe-call|ftrace-func)
      kjit_load "" calltrace && workload_short && kjit_calls > "$OUT/funcs-call.raw"; kjit_unload
      log "call list from kjitctl calls"
      # ftrace can trace only names in available_filter_functions; kprobes
      # go on the discovered addresses (kjitctl calls), or on the names when
      # no address was listed
      sed 's/ .*//' /sys/kernel/tracing/available_filter_functions | sort -u > /tmp/aff.txt
      awk '{print $NF}' "$OUT/funcs-call.raw" | sed 's/+0x0$//; s/\[.*//' | grep -v '+' | sort -u \
        | grep -Fxf /tmp/aff.txt > "$OUT/funcs-call.txt"
      if grep -q '^0x' "$OUT/funcs-call.raw"; then
        awk '/^0x/ {print $1}' "$OUT/funcs-call.raw" | sort -u > "$OUT/addr-call.txt"
      else
        cp "$OUT/funcs-call.txt" "$OUT/addr-call.txt"
      fi
      log "call list: $(wc -l < "$OUT/addr-call.txt") probe targets, $(wc -l < "$OUT/funcs-call.txt") ftrace-able functions" ;;
    kprobe-bb)
      kjit_load "" bbcount && workload_short && kjit_blocks > "$OUT/addr-bb.raw"; kjit_unload
      awk '/^0x/ {print $1}' "$OUT/addr-bb.raw" | sort -u > "$OUT/addr-bb.txt"
      log "block list from kjitctl blocks: $(wc -l < "$OUT/addr-bb.txt")" ;;
  esac
  return 0
}
# --- main --------------------------------------------------------------------
log "kernel $(uname -r); kprobes-optimization=$(cat /proc/sys/debug/kprobes-optimization 2>/dev/null)"
discover || { log "SKIPPED: discovery failed"; echo skipped > "$OUT/status"; exit 0; }
case "$CONFIG" in
  *-switching) switcher_start || { log "SKIPPED: no trace instance"; echo skipped > "$OUT/status"; exit 0; } ;;
esac
for i in $(seq 1 "$REPS"); do
  { micro; macro macro-cold; macro macro; } > "$OUT/rep$i-native.txt" 2>&1
  if ! setup >> "$OUT/setup.log" 2>&1; then log "SKIPPED: setup failed"; echo skipped > "$OUT/status"; exit 0; fi
  sync
  micro > "$OUT/rep$i-config.txt" 2>&1
  stats_snapshot "$OUT/rep$i-stats-micro.txt"
  mid_flush
  macro macro-cold >> "$OUT/rep$i-config.txt" 2>&1
  stats_snapshot "$OUT/rep$i-stats-macro-cold.txt"
  macro macro >> "$OUT/rep$i-config.txt" 2>&1
  stats_snapshot "$OUT/rep$i-stats-macro.txt"
  teardown >> "$OUT/setup.log" 2>&1
  log "rep $i done"; sync
done
switcher_stop
save_dmesg
echo ok > "$OUT/status"
sync
