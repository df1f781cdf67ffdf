#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/neighbours.sh.
# Other tools that hook functions kjit translates come and go while kjit is
# attached to openat, read and close (block counting); each must count
# exactly what it counts natively, and calls made through kjit after it
# went away must run (its trampoline or detour is freed by then).
# Preamble parameters: N (calls counted per run), NLP (reads of
# /proc/cmdline per livepatch run), ROUNDS (before/after rounds per tool),
# TOOLS (any of: ftrace graph kprobe kretprobe sched livepatch bpf switching), ORDERS
# ("before after", or one of them).
# Every tool is measured natively first, in this boot; then each round
# runs it twice: "before" (the tool is on when kjit translates the path)
# and "after" (kjit has translated the path when the tool comes).
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
: > notes.txt
step() {
  echo "== $* ($(cut -d' ' -f1 /proc/uptime)s)"
  echo "<2>kjit-neighbours: step $*" > /dev/kmsg 2>/dev/null
}
note() { echo "NOTE $*" | tee -a notes.txt; }

T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
[ -d /sys/kernel/debug/kprobes ] || mount -t debugfs nodev /sys/kernel/debug
# Tracers and trace events start the scheduler tracepoints (comm recording)
# when they are the first user, which flips static keys: a text change that
# can make kjit drop its translations for a reason of its own, hiding the
# one this test is about.  Where perf or trace-cmd runs they are on
# already: hold them on.
for e in sched_switch sched_wakeup sched_wakeup_new; do echo 1 > $T/events/sched/$e/enable; done
ORIG_CMDLINE=$(cat /proc/cmdline)
# /proc/cmdline as read() returns it (busybox cat uses sendfile, not read)
cmdline() { ./neighbour_calls print /proc/cmdline; }
LP=/sys/kernel/livepatch/kjit_livepatch
ORDER=native

# --- kjit ----------------------------------------------------------------------
kjit_on() {  # NAME: attach the workload's system calls, translate their paths anew
  $K flush || fail "$1_flush"
  if ! $K attach openat read close nanosleep clock_nanosleep > attach.txt 2>&1; then
    fail "$1_attach" "$(tr '\n' ' ' < attach.txt)"
    return 1
  fi
  ./neighbour_calls openat 3 > /dev/null
  ./neighbour_calls read 3 > /dev/null
  cmdline > /dev/null
}
kjit_off() { $K detach all > /dev/null || fail "$1_detach"; }

# wait_for SECONDS CMD...: until CMD succeeds
wait_for() {
  w_n=$1; shift
  while ! "$@"; do
    [ "$w_n" -gt 0 ] || return 1
    sleep 1; w_n=$((w_n - 1))
  done
}

# --- the neighbours: on_T, off_T, count_T ----------------------------------------
# count_T prints "COUNTER VALUE WANT" lines for one run of known calls.

# A trace instance's function tracer: its own ftrace_ops and trampoline.
I=$T/instances/kjitn
on_ftrace() { mkdir $I && echo do_sys_openat2 > $I/set_ftrace_filter && echo function > $I/current_tracer; }
off_ftrace() { echo nop > $I/current_tracer && rmdir $I; }
count_ftrace() {
  echo > $I/trace
  # no redirection: a file opened for the helper would be an openat of its pid
  out=$(./neighbour_calls openat "$N") || return 1
  echo "trace_lines $(grep -c -- "-${out#pid } .*do_sys_openat2" $I/trace) $N"
}

# A busy tracer: a trace instance's function tracer on every function,
# switched on and off SWITCHES times around N openat calls each time.  The
# calls traced while it is on must be all of them; and beside kjit the
# switching must retire nothing (every fentry site's state is read live by
# the translations): no text-change retirement, no flush.  Blocks built
# again during the loop are reported.
SWITCHES=3
IA=$T/instances/kjitall
on_switching() { mkdir $IA; }
off_switching() { echo nop > $IA/current_tracer; rmdir $IA; }
count_switching() {
  if [ "$ORDER" != native ]; then
    $K stats > sw-0.txt
  fi
  i=0 sw_lines=0
  while [ $i -lt $SWITCHES ]; do
    echo 1 > $IA/tracing_on
    echo function > $IA/current_tracer || return 1
    out=$(./neighbour_calls openat "$N") || return 1
    # stopped, read, then switched off (a tracer change empties the buffer)
    echo 0 > $IA/tracing_on
    sw_lines=$((sw_lines + $(grep -c -- "-${out#pid } .*: do_sys_openat2 <-" $IA/trace)))
    echo nop > $IA/current_tracer || return 1
    i=$((i + 1))
  done
  echo "switch_trace_lines $sw_lines $((SWITCHES * N))"
  if [ "$ORDER" != native ]; then
    $K stats > sw-1.txt
    sw_d() { awk -v k="$1" '$1==k {v[FILENAME]=$2} END {print v["sw-1.txt"] - v["sw-0.txt"]}' sw-0.txt sw-1.txt; }
    echo "switch_text_flushes $(sw_d text_flushes) 0"
    echo "switch_flushes $(sw_d flushes) 0"
    # The cache was not emptied: what it held before the loop, it holds
    # after (the bytes used only grow).
    echo "switch_cache_emptied $([ "$(sw_d cache_bytes_used)" -ge 0 ] && echo 0 || echo 1) 0"
    echo "NOTE switching ($ORDER): $SWITCHES on/off switches of the function tracer on every function: text_site_events +$(sw_d text_site_events), text_events +$(sw_d text_events), text_retires +$(sw_d text_retires), traces_retired +$(sw_d traces_retired), blocks_built +$(sw_d blocks_built), cache_bytes_used +$(sw_d cache_bytes_used), text_flush_cause $(grep '^text_flush_cause' sw-1.txt | cut -c20-)" >&2
  else
    echo "switch_text_flushes 0 0"
    echo "switch_flushes 0 0"
    echo "switch_cache_emptied 0 0"
  fi
}

# function_graph on do_sys_openat2: each call an entry and a return (the
# return address replaced by return_to_handler).  A call whose two events
# are adjacent prints "do_sys_openat2();", otherwise "do_sys_openat2() {"
# and "} /* do_sys_openat2 */" (funcgraph-tail).
on_graph() {
  echo do_sys_openat2 > $T/set_ftrace_filter && echo 1 > $T/options/funcgraph-proc &&
    echo 1 > $T/options/funcgraph-tail && echo function_graph > $T/current_tracer
}
off_graph() { echo nop > $T/current_tracer && echo > $T/set_ftrace_filter; }
count_graph() {
  echo > $T/trace
  out=$(./neighbour_calls openat "$N") || return 1
  grep -- "-${out#pid } " $T/trace | awk -v n="$N" '
    /do_sys_openat2\(\);/ {e++; r++} /do_sys_openat2\(\) \{/ {e++} /\} \/\* do_sys_openat2 \*\// {r++}
    END {printf "graph_entries %d %d\ngraph_returns %d %d\n", e, n, r, n}'
}

# kprobes: on do_sys_openat2's fentry site (through ftrace), and int3
# probes inside do_sys_openat2 and vfs_read (after the fentry call: an
# instruction boundary), which the kprobe optimizer turns into a jump to a
# detour buffer.  Hit counts from kprobe_profile, read by the helper.
# The first instruction after the fentry call: +5, or +9 after an ENDBR
# (IBT kernels); a probe inside the call is refused (EILSEQ), so the first
# offset the kernel takes is the one.
probe_after_fentry() {
  for off in 5 9; do
    echo "p:$1 $2+$off" >> $T/kprobe_events 2>/dev/null && { echo "$off"; return 0; }
  done
  return 1
}
on_kprobe() {
  echo 'p:kjitn do_sys_openat2' >> $T/kprobe_events && o_open=$(probe_after_fentry kjito do_sys_openat2) &&
    o_read=$(probe_after_fentry kjitv vfs_read) && echo 1 > $T/events/kprobes/enable || return 1
  if wait_for 20 optimized "do_sys_openat2+0x$o_open" && wait_for 5 optimized "vfs_read+0x$o_read"; then
    note "kprobe ($ORDER): the probes inside do_sys_openat2 and vfs_read are optimized"
  else
    note "kprobe ($ORDER): not optimized after 20 s: $(grep -e 'do_sys_openat2+' -e 'vfs_read+' /sys/kernel/debug/kprobes/list | tr '\n' ' ')"
  fi
}
optimized() { grep -q "$1 .*OPTIMIZED" /sys/kernel/debug/kprobes/list; }
off_kprobes() { echo 0 > $T/events/kprobes/enable && echo > $T/kprobe_events; }
off_kprobe() { off_kprobes; }
# profile_counts CALL PROBE...: each probe's hits and misses for N calls
profile_counts() {
  p_call=$1; shift
  ./neighbour_calls "$p_call" "$N" $T/kprobe_profile > profile.txt || return 1
  for p in "$@"; do
    awk -v p="$p" -v n="$N" '$1==p {print p, $2, n; print p "_missed", $3, 0; f=1}
                             END {if (!f) print p, "absent", n}' profile.txt
  done
}
# The probes inside the functions must be jump-optimized while they count:
# an int3 probe would leave the detour-buffer hazard untested.
count_kprobe() {
  profile_counts openat kjitn kjito && profile_counts read kjitv || return 1
  for p in "do_sys_openat2+0x$o_open" "vfs_read+0x$o_read"; do
    if optimized "$p"; then echo "${p%%+*}_probe_optimized yes yes"; else echo "${p%%+*}_probe_optimized no yes"; fi
  done
  # Arming a probe in translated bytes (its int3, then the optimizer's
  # jump) retires the traces built from those bytes and nothing else: no
  # flush.  Were there one, kjitctl stats names the change.
  if [ "$ORDER" != native ]; then
    echo "kprobe_text_flushes $(( $(stat_of text_flushes) - TF0 )) 0"
    [ "$(stat_of text_flushes)" = "$TF0" ] ||
      echo "NOTE text_flush_cause: '$($K stats | sed -n 's/^text_flush_cause *//p')'" >&2
    echo "NOTE kprobe ($ORDER): text_retires +$(( $(stat_of text_retires) - TR0 )), traces_retired +$(( $(stat_of traces_retired) - TT0 )), blocks_retired +$(( $(stat_of blocks_retired) - TB0 ))" >&2
  else
    echo "kprobe_text_flushes 0 0"
  fi
}

# kretprobes (rethook: the return address replaced by rethook_trampoline)
# on do_sys_openat2 and on __x64_sys_openat, which kjit attaches: nhit
# counts the returns, and no event may be missed.
on_kretprobe() {
  echo 'r:kjitr do_sys_openat2' >> $T/kprobe_events && echo 'r:kjitrs __x64_sys_openat' >> $T/kprobe_events &&
    echo 1 > $T/events/kprobes/enable
}
off_kretprobe() { off_kprobes; }
count_kretprobe() { profile_counts openat kjitr kjitrs; }

# A kretprobe on __schedule (tests/guest/hazard/kjit_schedkret.c: a
# module's, since __schedule is notrace and kprobe_events refuses it),
# where kjit's scheduler gate follows the sleeps of attached calls: while
# it is hooked the gate leaves the return slot to the kretprobe.  Every
# sleep of the helper's N 20 ms nanosleeps returns through it; only the
# __schedule of its exit (do_task_dead) never returns.  The sleeps are the
# helper's voluntary switches, which it prints: most of the N, not all when
# a timer expires before its task reaches the scheduler (the guest's clock
# jumps when the host deschedules TCG), and then nothing sleeps.
SK=/sys/module/kjit_schedkret/parameters
on_sched() { insmod ./kjit_schedkret.ko; }
off_sched() { rmmod kjit_schedkret; }
count_sched() {
  echo 0 > $SK/counts
  ./neighbour_calls nanosleep "$N" > sleeps.txt || return 1
  slept=$(sed -n 's/^slept //p' sleeps.txt)
  read -r s_in s_out s_missed < $SK/counts
  printf 'sched_unreturned %d 1\nsched_returns_cover_sleeps %d 1\nsched_missed %d 0\n' \
    $((s_in - s_out)) $((${slept:-0} > 0 && s_out >= ${slept:-0})) "$s_missed"
}

# A livepatch of cmdline_proc_show (tests/guest/hazard/kjit_livepatch.c),
# reached through read: /proc/cmdline must print "kjit-livepatch" while it
# is on and the real command line once it is disabled.
on_livepatch() {
  insmod ./kjit_livepatch.ko || return 1
  wait_for 60 lp_settled
}
lp_settled() { [ "$(cat $LP/transition 2>/dev/null)" = 0 ]; }
lp_gone() { [ ! -d $LP ]; }
off_livepatch() {
  echo 0 > $LP/enabled || return 1
  cmdline > /dev/null   # a read while the patch goes
  wait_for 60 lp_gone || { echo "the patch did not go within 60 s"; return 1; }
  c=$(cmdline)
  [ "$c" = "$ORIG_CMDLINE" ] || { echo "disabled, /proc/cmdline prints '$c'"; return 1; }
  rmmod kjit_livepatch
}
count_livepatch() {
  i=0 p=0
  while [ $i -lt "$NLP" ]; do
    [ "$(cmdline)" != kjit-livepatch ] || p=$((p + 1))
    i=$((i + 1))
  done
  echo "patched_reads $p $NLP"
}

# BPF fentry/fexit programs (BPF trampolines) on do_sys_openat2 and on
# __x64_sys_openat, which kjit attaches.  bpf_count holds them while it
# runs: for "before", it attaches kjit itself once its programs are on.
BPF_FUNCS="do_sys_openat2 __x64_sys_openat"
# "before" starts right after the previous round's detach, while kjit
# keeps that round's direct ops registered (two quiet seconds, see
# os/linux/README.md, "Direct entry"): BPF must get __x64_sys_openat from
# a parked ops too.
on_bpf() { :; }
off_bpf() { :; }
count_bpf() {
  cmd=true
  [ "$ORDER" != before ] ||
    cmd="./kjitctl flush && ./kjitctl attach openat read close > /dev/null && ./neighbour_calls openat 3 > /dev/null"
  # shellcheck disable=SC2086  # BPF_FUNCS is a list
  ./bpf_count "$N" "$cmd" $BPF_FUNCS > bpf.txt 2> bpf.err || { cat bpf.err >&2; return 1; }
  cat bpf.err >&2
  awk -v n="$N" '
    $2 == "fentry" {print $1 "_fentry", $3, n; print $1 "_fexit", $5, n; next}
    {e = substr($0, index($0, "error")); gsub(/ /, "_", e); print $1 "_error", e, "loaded"}' bpf.txt
}

# --- one run, its checks -----------------------------------------------------------
LOG_ERRS=0
# log_check NAME: the kernel log has no error line it did not have before
log_check() {
  dmesg > dmesg-now.txt
  ./kernel-log-errors.sh dmesg-now.txt > log-errors.txt
  n=$(wc -l < log-errors.txt)
  if [ "$n" -gt "$LOG_ERRS" ]; then
    fail "$1_kernel_log" "$(sed -n "$((LOG_ERRS + 1)),$((LOG_ERRS + 4))p" log-errors.txt | tr '\n' ' ')"
    LOG_ERRS=$n
  else
    pass "$1_kernel_log"
  fi
}

# stat_delta KEY: how much a `kjitctl stats` counter grew from stats-0.txt to stats-1.txt
stat_delta() { awk -v k="$1" '$1==k {v[FILENAME]=$2} END {print v["stats-1.txt"] - v["stats-0.txt"]}' stats-0.txt stats-1.txt; }

# judge NAME FILE [NATIVE_FILE]: every "COUNTER VALUE WANT" line of FILE has
# VALUE = WANT, and the value NATIVE_FILE has for the same counter; FILE has
# every counter NATIVE_FILE has (none lost beside kjit)
judge() {
  if [ ! -s "$2" ]; then fail "$1" "no counts: $(tr '\n' ' ' < "$2.err")"; return 1; fi
  j_r=$(awk -v nat="${3:-}" '
    BEGIN {if (nat != "") while ((getline l < nat) > 0) {split(l, a, " "); nv[a[1]] = a[2]}}
    {all = all $1 "=" $2 " "; seen[$1] = 1
     if ($2 != $3 || (nat != "" && nv[$1] != $2))
       bad = bad $1 "=" $2 " (want " $3 (nat != "" ? ", native " nv[$1] : "") ") "}
    END {for (c in nv) if (!(c in seen)) bad = bad c " lost (native " nv[c] ") "
         if (bad != "") print "FAIL " bad; else print "PASS " all}' "$2")
  if [ "${j_r%% *}" = PASS ]; then pass "$1" "${j_r#PASS }"; else fail "$1" "${j_r#FAIL }"; return 1; fi
}

# hooked_targets TOOL: "FUNCTION CALLS [open]" for each function TOOL hooks
# that the counted calls reach from translated code, and how many do (kjit
# hands each such call to the hook: a "hooked" departure); "open": every
# read in the window reaches it (kjitctl's and the shell's), no upper bound
hooked_targets() {
  case $1 in
    ftrace|graph|kretprobe|bpf) echo "do_sys_openat2 $N" ;;
    switching) echo "do_sys_openat2 $((SWITCHES * N)) open" ;;
    kprobe) echo "do_sys_openat2 $N"; echo "vfs_read+0x$o_read $N open" ;;
    livepatch) echo "cmdline_proc_show $NLP" ;;
  esac
}
# hooked_delta TARGET: how many "hooked" departures at TARGET dep-0.txt to
# dep-1.txt; a function's are at its fentry site, TARGET+0x4 after an
# ENDBR (an IBT kernel's address-taken functions)
hooked_delta() {
  awk -v t="$1" '$1=="hooked" && ($3==t || (t !~ /\+/ && $3==t "+0x4")) {v[FILENAME]+=$2}
                 END {print v["dep-1.txt"] - v["dep-0.txt"]}' dep-0.txt dep-1.txt
}

# through_kjit NAME TOOL: the counted calls ran in kjit: entries, none
# declined or skipped, and the calls of each hooked function handed to
# its hook, at least as many as counted and at most HOOK_SLACK more (the
# test's own kjitctl runs and shell redirections open files in the window:
# 9 to 17 more openat calls in a run of every tool)
HOOK_SLACK=30
through_kjit() {
  e=$(stat_delta entries) d=$(stat_delta entry_declined) s=$(stat_delta entry_skipped)
  tk_bad="" tk_all="entries +$e, declined +$d, skipped +$s"
  [ "$e" -ge "$N" ] || tk_bad="$tk_bad entries +$e for $N calls;"
  [ "$d" = 0 ] && [ "$s" = 0 ] || tk_bad="$tk_bad declined +$d, skipped +$s;"
  hooked_targets "$2" > hooked.txt
  while read -r h_f h_n h_open; do
    h=$(hooked_delta "$h_f")
    tk_all="$tk_all, $h_f hooked +$h"
    [ "$h" -ge "$h_n" ] && { [ -n "$h_open" ] || [ "$h" -le $((h_n + HOOK_SLACK)) ]; } ||
      tk_bad="$tk_bad $h_f hooked +$h for $h_n calls;"
  done < hooked.txt
  if [ -z "$tk_bad" ]; then pass "${1}_through_kjit" "$tk_all"
  else fail "${1}_through_kjit" "$tk_bad (reclaims +$(stat_delta reclaims), flushes +$(stat_delta flushes))"; fi
}

# after_calls NAME: the tool is gone; calls through kjit go on and are right
after_calls() {
  a_ok=1 e0=$(stat_of entries)
  for i in 1 2 3; do
    ./neighbour_calls openat "$N" > /dev/null || a_ok=0
    ./neighbour_calls read "$N" > /dev/null || a_ok=0
    c=$(cmdline)
    [ "$c" = "$ORIG_CMDLINE" ] || { a_ok=0; echo "/proc/cmdline: '$c'"; }
    sleep 1   # BPF trampolines and kprobe detours are freed after RCU-tasks
  done
  e1=$(stat_of entries)
  if [ $a_ok = 1 ] && [ $((e1 - e0)) -ge $((3 * N)) ]; then
    pass "$1_gone" "calls go on through kjit: entries +$((e1 - e0))"
  else
    fail "$1_gone" "calls failed ($a_ok) or did not run through kjit (entries +$((e1 - e0)))"
  fi
}

# run TOOL ORDER ROUND
run() {
  t=$1 ORDER=$2 name=$1_$2${3:+_$3}
  step "$name"
  if [ "$ORDER" != native ]; then
    TF0=$(stat_of text_flushes) LH0=$(stat_of left_hooked)
    TR0=$(stat_of text_retires) TT0=$(stat_of traces_retired) TB0=$(stat_of blocks_retired)
  fi
  if [ "$ORDER" = after ]; then kjit_on "$name" || return; fi
  if ! on_"$t" > on.txt 2>&1; then
    fail "${name}_on" "$(tr '\n' ' ' < on.txt)"
    off_"$t" > /dev/null 2>&1
  else
    cat on.txt
    if [ "$ORDER" = before ] && [ "$t" != bpf ]; then kjit_on "$name"; fi
    [ "$ORDER" = native ] || { $K stats > stats-0.txt; $K departures > dep-0.txt; }
    c_rc=0; count_"$t" > "$name.txt" 2> "$name.txt.err" || c_rc=$?
    [ "$c_rc" = 0 ] || fail "${name}_counter_status" "the counting program exited $c_rc: $(tr '\n' ' ' < "$name.txt.err")"
    [ "$ORDER" = native ] || { $K stats > stats-1.txt; $K departures > dep-1.txt; }
    grep '^NOTE' "$name.txt.err" >> notes.txt
    if [ "$ORDER" = native ]; then
      judge "$name" "$name.txt"
    else
      judge "$name" "$name.txt" "${t}_native.txt"
      through_kjit "$name" "$t"
    fi
    sync   # the verdicts reach the disk even if what follows oopses
    if ! off_"$t" > off.txt 2>&1; then fail "${name}_off" "$(tr '\n' ' ' < off.txt)"; fi
  fi
  if [ "$ORDER" != native ]; then
    note "$name: text_flushes $TF0 -> $(stat_of text_flushes), left_hooked ${LH0:-?} -> $(stat_of left_hooked)"
    sync
    after_calls "$name"
    $K departures > "departures-$name.txt" 2>&1
    kjit_off "$name"
  fi
  log_check "$name"
  sync
}

# --- the test ----------------------------------------------------------------------
step native
for t in $TOOLS; do run "$t" native; done

step insmod
insmod ./kjit.ko || { fail insmod; dmesg > dmesg.txt; sync; exit 1; }
note_modules
config_base
config config_bbcount bbcount || { dmesg > dmesg.txt; sync; exit 1; }
sync
for t in $TOOLS; do
  r=1
  while [ $r -le "$ROUNDS" ]; do
    for o in ${ORDERS:-before after}; do run "$t" "$o" $r; done
    r=$((r + 1))
  done
done

# --- attached functions nested in attached functions -----------------------------
# A translated openat or read reaches do_sys_openat2 or vfs_read, attached
# too, whose fentry site calls kjit's direct trampoline: the caller leaves
# the cache there (left_nested_entry) and the callee is an entry of its
# own.  Those are not calls of kjit's device: of the window's kjitctl runs
# only the second one's open of /dev/kjit is (kjit_control +1).
step nested
if $K attach openat read do_sys_openat2 vfs_read > attach.txt 2>&1; then
  $K stats > stats-0.txt
  { ./neighbour_calls openat "$N" > /dev/null && ./neighbour_calls read "$N" > /dev/null; } || fail nested_calls
  $K stats > stats-1.txt
  n_n=$(stat_delta left_nested_entry) n_c=$(stat_delta kjit_control) n_o=$(stat_delta left_native_call)
  if [ "$n_n" -ge $((2 * N)) ] && [ "$n_c" = 1 ]; then
    pass nested_entries "left_nested_entry +$n_n, kjit_control +$n_c, left_native_call +$n_o for $N openat and $N read"
  else
    fail nested_entries "left_nested_entry +$n_n (want >= $((2 * N))), kjit_control +$n_c (want 1: the reading kjitctl's open), left_native_call +$n_o"
  fi
else
  fail nested_entries "attach: $(tr '\n' ' ' < attach.txt)"
fi
$K detach all > /dev/null || fail nested_detach

step end
if $K stats > stats-final.txt 2>&1 && grep -q '^entries ' stats-final.txt; then
  pass stats_readable "$(grep '^completion' stats-final.txt)"
else
  fail stats_readable "$(head -n 3 stats-final.txt | tr '\n' ' ')"
fi
$K departures > departures-final.txt 2>&1
chk final_detach "$K" detach all
chk final_rmmod rmmod kjit
log_snapshot
if ./kernel-log-errors.sh dmesg.txt > bad-log.txt; then
  fail kernel_log_clean "$(head -n 3 bad-log.txt | tr '\n' ' ')"
else
  pass kernel_log_clean
fi
guest_done NEIGHBOURS-GUEST-DONE
