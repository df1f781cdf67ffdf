#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/attach-all.sh.
# Preamble parameters: SEED (the random choice), NRANDOM (functions chosen
# at random from `kjitctl list '*'`; 0 = every attachable one), BATCH
# (functions a request in the batched round), ITERS (workload iterations
# a run), OWN (kjit's own functions: the engine lock's, RCU's, the
# preemption helpers, allocators, irq_work, kallsyms), MUST (those of OWN
# that must be attached wherever the kernel has them as functions).
# Phases: (a) each of OWN is refused with a reason or attached (each of
# MUST attached), and at least one is attached: first the
# lock's two alone (the ones that hung and panicked), then all of them in
# one request, with the workload, by direct calls and again through the
# IPMODIFY ops (direct_entry=0); (b) NRANDOM random functions attached in
# requests of BATCH while the workload runs, detached, then attached in
# one request while it runs again.  Every workload run must print what it
# printed natively; in each phase calls entered the cache and the declined
# and the skipped stay within bounds; rmmod must work; the kernel log must
# stay clean.
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
W=./workload
: > checks.txt
step() {
  echo "== $* ($(cut -d' ' -f1 /proc/uptime)s)"
  echo "<2>kjit-attach-all: step $*" > /dev/kmsg 2>/dev/null
}
now() { cut -d' ' -f1 /proc/uptime; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b - a}'; }

ifconfig lo 127.0.0.1 up 2>/dev/null || ip link set lo up
echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

step native
$W "$ITERS" > native.txt 2>&1
chk native_workload grep -q '^timers_sleep_timerfd_itimer *ok' native.txt

step insmod
insmod ./kjit.ko || { fail insmod; dmesg > dmesg.txt; echo ATTACH-ALL-GUEST-DONE; exit 1; }
note_modules
sync

# Runs the workload in a loop in the background until stop-load exists;
# load_check NAME: stops it and checks that every run printed native.txt.
load_start() {
  rm -f stop-load load-*.txt
  ( i=0; while [ ! -f stop-load ]; do
      timeout 600 $W "$ITERS" > "load-$i.txt" 2>&1 || echo "load $i: status $?" >> load-status.txt
      i=$((i + 1))
    done ) & LOAD_PID=$!
}
load_check() {
  touch stop-load; wait "$LOAD_PID"; rm -f stop-load
  l_n=0 l_bad=0
  for f in load-*.txt; do
    [ -f "$f" ] || continue
    l_n=$((l_n + 1)); cmp -s native.txt "$f" || { l_bad=$((l_bad + 1)); diff native.txt "$f" | head -n 5; }
  done
  if [ "$l_n" -gt 0 ] && [ "$l_bad" = 0 ]; then pass "$1" "$l_n workload runs equal native"
  else fail "$1" "$l_bad of $l_n workload runs differ from native"; fi
}

# phase_calls NAME FROM TO MAX_DECLINED MAX_SKIPPED: the calls of the
# attached functions between two `kjitctl stats` outputs, FROM taken once
# the attach request returned (its own calls into the functions it
# attaches are skipped by design: the attaching task is never entered):
# some entered the cache, and the declined and the skipped are at most
# those percentages of the calls that could enter (entered + declined +
# skipped; nested calls, kjit's own, are declined by design).
phase_calls() {
  read -r pe pd ps <<EOT
$(awk 'NR == FNR {b[$1] = $2; next} $1 ~ /^calls_(entered|declined|skipped)$/ {d[$1] = $2 - b[$1]}
       END {print d["calls_entered"] + 0, d["calls_declined"] + 0, d["calls_skipped"] + 0}' "$2" "$3")
EOT
  pt=$((pe + pd + ps))
  pm="entered $pe, declined $pd (at most $4%), skipped $ps (at most $5%) of $pt calls"
  if [ "$pe" -gt 0 ] && [ $((pd * 100)) -le $((pt * $4)) ] && [ $((ps * 100)) -le $((pt * $5)) ]; then pass "$1" "$pm"
  else fail "$1" "$pm"; fi
}
# must_attach F: F is one of MUST
must_attach() { case " $MUST " in *" $1 "*) return 0 ;; esac; return 1; }
# not_a_function F: the kernel has no function F (inlined everywhere)
not_a_function() { ! grep -q " [tT] $1\$" /proc/kallsyms; }

# --- (a) kjit's own functions ---------------------------------------------
# What `kjitctl list '*'` says of every function ftrace can attach, with
# nothing attached: the name alone (attachable) or "refused: why".
step "kjitctl list '*'"
: > random-summary.txt
t0=$(now)
$K list '*' > list-all.txt 2> list-all.err
echo "kjitctl list '*': $(cat list-all.err) in $(secs "$t0" "$(now)") s" | tee -a random-summary.txt
# list_verdict NAME: "attachable", "refused: why", or "absent" (not
# attachable by ftrace: notrace, inlined, or no such function).
list_verdict() {
  awk -v n="$1" '$1==n{ f=1; if (NF == 1) print "attachable"; else { $1=""; sub(/^ /, ""); print }; exit }
                 END{ if (!f) print "absent" }' list-all.txt
}

for f in _raw_spin_lock_irqsave _raw_spin_unlock_irqrestore; do
  step "own: $f alone"
  v=$(list_verdict "$f")
  case $v in
    attachable)
      if $K attach "$f" > "own-$f.txt" 2>&1; then
        $K stats > "stats-own-$f-attached.txt"
        $W "$ITERS" > "wl-own-$f.txt" 2>&1
        $K stats > "stats-own-$f.txt"
        nested=$(stat_of entry_nested)
        $K detach all > /dev/null
        if cmp -s native.txt "wl-own-$f.txt"; then
          pass "own_alone_$f" "attached, workload equal native, nested $nested"
        else
          fail "own_alone_$f" "attached, workload differs from native"
        fi
        phase_calls "own_alone_calls_$f" "stats-own-$f-attached.txt" "stats-own-$f.txt" 5 5
      else
        fail "own_alone_$f" "listed attachable, attach failed: $(tr '\n' ' ' < "own-$f.txt")"
      fi ;;
    *) fail "own_alone_$f" "must be attachable; kjitctl list: $v" ;;
  esac
done

step "own: all in one request"
: > own-names.txt
for f in $OWN; do
  v=$(list_verdict "$f")
  echo "$f: $v"
  if [ "$v" = attachable ]; then echo "$f" >> own-names.txt
  elif must_attach "$f" && [ "$v" = absent ] && not_a_function "$f"; then pass "own_$f" "no such function on this kernel (inlined)"
  elif must_attach "$f"; then fail "own_$f" "must be attachable; kjitctl list: $v"
  else
    case $v in
      refused*) pass "own_$f" "$v" ;;
      absent) pass "own_$f" "not attachable by ftrace on this kernel" ;;
      *) fail "own_$f" "kjitctl list: $v" ;;
    esac
  fi
done
if [ -s own-names.txt ]; then pass own_attachable "$(wc -l < own-names.txt) of $(echo "$OWN" | wc -w) attachable"
else fail own_attachable "none of OWN is attachable: the phases below would prove nothing"; fi
if [ -s own-names.txt ]; then
  if $K attach -f own-names.txt > own-attach.txt 2>&1; then
    while read -r f; do pass "own_$f" attached; done < own-names.txt
    $K stats > stats-own-attached.txt
  else
    fail own_attach "$(tr '\n' ' ' < own-attach.txt)"
  fi
  load_start
  $W "$ITERS" > wl-own.txt 2>&1
  load_check own_workload_under_load
  chk own_workload_same cmp -s native.txt wl-own.txt
  $K stats > stats-own.txt
  echo "own functions: $(grep -E '^(nattached|entries|entry_nested|entry_skipped|fast_entries) ' stats-own.txt | tr '\n' ' ')"
  nested=$(stat_of entry_nested)
  # the engine lock's functions are attached: kjit's own calls to them
  # must have been declined as nested
  chk own_nested_declined [ "${nested:-0}" -gt 0 ]
  phase_calls own_calls stats-own-attached.txt stats-own.txt 5 5
  chk own_detach $K detach all

  # The same with a tiny cache: reclaims all along, whose work item and
  # its kick run through attached functions (queue_work_on, irq_work's).
  step "own: all in one request, a tiny cache"
  config_base
  own_tool=$(stat_of tool)
  if config config_own_tiny_cache "$own_tool" 16; then
    $K attach -f own-names.txt > own-attach-tiny.txt 2>&1 || fail own_attach_tiny "$(tr '\n' ' ' < own-attach-tiny.txt)"
    $K stats > stats-own-tiny-attached.txt
    r0=$(stat_of reclaims)
    load_start
    $W "$ITERS" > wl-own-tiny.txt 2>&1
    # How much code the workload reaches through these few functions
    # varies from run to run: keep the load going until two reclaims
    # have run under it (or 60 s have passed).
    t0=$(now) r1=$(stat_of reclaims)
    while [ "$((r1 - r0))" -lt 2 ] && [ "$(secs "$t0" "$(now)" | cut -d. -f1)" -lt 60 ]; do
      sleep 1; r1=$(stat_of reclaims)
    done
    load_check own_tiny_cache_under_load
    $K stats > stats-own-tiny.txt
    r1=$(stat_of reclaims)
    chk own_workload_same_tiny_cache cmp -s native.txt wl-own-tiny.txt
    if [ "$((r1 - r0))" -ge 2 ]; then pass own_tiny_cache_reclaimed "reclaims $r0 -> $r1"
    else fail own_tiny_cache_reclaimed "reclaims $r0 -> $r1 (want 2 or more)"; fi
    phase_calls own_tiny_cache_calls stats-own-tiny-attached.txt stats-own-tiny.txt 50 5
    chk own_detach_tiny_cache $K detach all
    config config_own_cache_restored "$own_tool" 0
  fi

  # The same through the IPMODIFY ftrace_ops and its handler (the other way
  # into the engine), on a module loaded with direct_entry=0.
  step "own: all in one request, IPMODIFY ops"
  if rmmod kjit && insmod ./kjit.ko direct_entry=0; then
    note_modules
    $K attach -f own-names.txt > own-attach-ipmodify.txt 2>&1 || fail own_attach_ipmodify "$(tr '\n' ' ' < own-attach-ipmodify.txt)"
    # Attaching through the IPMODIFY ops rewrites sites kjit has read: 15
    # to 22 text retirements during the attach leave both cache halves
    # waiting for reclaims, which come at most every 500 ms
    # (reclaim_work.c); a workload run at once ran natively, every call
    # declined as cache_full.  Entries kick the reclaims: a few short runs
    # over two seconds let them happen, then the phase is measured.
    for i in 1 2 3 4; do $W 1 > /dev/null 2>&1; sleep 0.5; done
    $K stats > stats-own-ipmodify-attached.txt
    $W "$ITERS" > wl-own-ipmodify.txt 2>&1
    $K stats > stats-own-ipmodify.txt
    chk own_workload_same_ipmodify cmp -s native.txt wl-own-ipmodify.txt
    echo "own functions, IPMODIFY: $(grep -E '^(nattached|entries|entry_nested|direct_ops) ' stats-own-ipmodify.txt | tr '\n' ' ')"
    phase_calls own_ipmodify_calls stats-own-ipmodify-attached.txt stats-own-ipmodify.txt 5 5
    chk own_nested_declined_ipmodify [ "$(stat_of entry_nested)" -gt 0 ]
    chk own_ipmodify_only [ "$(stat_of direct_ops)" = 0 ]
    chk own_detach_ipmodify $K detach all
    if ! { rmmod kjit && insmod ./kjit.ko; }; then
      fail own_reload; dmesg > dmesg.txt; echo ATTACH-ALL-GUEST-DONE; exit 1
    fi
  else
    fail own_reload_ipmodify
  fi
fi

# counters FILE: what a phase added to the entry counters (since mark).
mark() { $K stats > stats-mark.txt; }
counters() {
  awk 'NR == FNR { base[$1] = $2; next }
       $1 ~ /^(entries|fast_entries|entry_nested|entry_skipped|entry_declined)$/ { printf "%s %d ", $1, $2 - base[$1] }
       $1 ~ /^(blocks_built|stop_addresses|direct_ops)$/ { printf "%s %s ", $1, $2 }' stats-mark.txt "$1"
}

# --- (b) random functions, batched, then at once ---------------------------
step "random: choosing"
awk 'NF == 1' list-all.txt > attachable.txt
total=$(wc -l < attachable.txt)
if [ "$NRANDOM" = 0 ] || [ "$NRANDOM" -ge "$total" ]; then
  cp attachable.txt chosen.txt
else
  awk -v s="$SEED" 'BEGIN{srand(s)} {printf "%.9f %s\n", rand(), $1}' attachable.txt |
    sort -n | head -n "$NRANDOM" | awk '{print $2}' > chosen.txt
fi
n=$(wc -l < chosen.txt)
echo "random: seed $SEED, $n of $total attachable functions"
echo "seed $SEED chosen $n attachable $total" >> random-summary.txt
chk random_chosen [ "$n" -gt 0 ]

step "random: $n in requests of $BATCH, workload running"
mark
load_start
t0=$(now)
$K attach --batch "$BATCH" -f chosen.txt > attach-batched.txt 2> attach-batched.err
rc=$?
$K stats > stats-batched-attached.txt
t1=$(now)
$W "$ITERS" > wl-batched.txt 2>&1
t2=$(now)
$K stats > stats-batched.txt
load_check random_batched_under_load
att=$(stat_of nattached)
tail -n1 attach-batched.txt
echo "batched: attached $att in $(secs "$t0" "$t1") s, one workload run $(secs "$t1" "$t2") s" | tee -a random-summary.txt
head -n 20 attach-batched.err
# names that share a function with another (__x64_sys_fork, __do_sys_fork)
# are answered "already attached"
alias=$(grep -c ': already attached$' attach-batched.err)
if [ "$rc" = 0 ] && [ $((att + alias)) = "$n" ]; then pass random_batched_attach "$att functions, $(tail -n1 attach-batched.txt)"
else fail random_batched_attach "attached $att of $n, status $rc: $(head -n 3 attach-batched.err | tr '\n' ' ')"; fi
chk random_batched_workload_same cmp -s native.txt wl-batched.txt
phase_calls random_batched_calls stats-batched-attached.txt stats-batched.txt 10 10
echo "batched: $(counters stats-batched.txt)" | tee -a random-summary.txt
t0=$(now)
chk random_batched_detach $K detach all
# Detached functions' direct ops stay registered until attach and detach
# have been quiet for 2 s (entry_direct.c), and attaching them again would
# only revive them: wait until they are gone, so that the next round is
# one new request.
i=0
while [ "$(stat_of direct_ops)" != 0 ] && [ $i -lt 120 ]; do sleep 0.5; i=$((i + 1)); done
chk random_direct_ops_released [ "$(stat_of direct_ops)" = 0 ]
echo "batched: detached in $(secs "$t0" "$(now)") s (direct ops unregistered)" | tee -a random-summary.txt

step "random: $n in one request, workload running"
mark
load_start
t0=$(now)
$K attach -f chosen.txt > attach-once.txt 2> attach-once.err
rc=$?
$K stats > stats-once-attached.txt
t1=$(now)
$W "$ITERS" > wl-once.txt 2>&1
t2=$(now)
$K stats > stats-once.txt
load_check random_once_under_load
att=$(stat_of nattached)
echo "at once: attached $att in $(secs "$t0" "$t1") s, one workload run $(secs "$t1" "$t2") s" | tee -a random-summary.txt
head -n 20 attach-once.err
# names that share a function with another (__x64_sys_fork, __do_sys_fork)
# are answered "already attached"
alias=$(grep -c ': already attached$' attach-once.err)
if [ "$rc" = 0 ] && [ $((att + alias)) = "$n" ]; then pass random_once_attach "$att functions, $(tail -n1 attach-once.txt)"
else fail random_once_attach "attached $att of $n, status $rc: $(head -n 3 attach-once.err | tr '\n' ' ')"; fi
chk random_once_workload_same cmp -s native.txt wl-once.txt
phase_calls random_once_calls stats-once-attached.txt stats-once.txt 10 10
echo "at once: $(counters stats-once.txt)" | tee -a random-summary.txt
t0=$(now)
chk random_once_detach $K detach all
t1=$(now)
if rmmod kjit; then pass rmmod; else fail rmmod; fi
echo "at once: detach $(secs "$t0" "$t1") s, rmmod $(secs "$t1" "$(now)") s" | tee -a random-summary.txt

log_snapshot
if ./kernel-log-errors.sh dmesg.txt > log-errors.txt; then fail kernel_log_clean "$(head -n 3 log-errors.txt | tr '\n' ' ')"
else pass kernel_log_clean; fi
guest_done ATTACH-ALL-GUEST-DONE
