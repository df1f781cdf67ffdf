#!/bin/sh
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/run-suite.sh.
# Every check prints "CHECK name PASS|FAIL detail" to checks.txt; the host
# fails on any FAIL.  Preamble parameters: QUICK=1 skips the slow stress
# phases, ITERS (workload iterations).
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
Q=${QUICK:-0}
W=./workload
ITERS=${ITERS:-1}
: > checks.txt
# Steps also go to the console (/dev/kmsg at KERN_CRIT, shown despite
# `quiet`): if the guest hangs, the host's console.log says where.
step() {
  echo "== $* ($(cut -d' ' -f1 /proc/uptime)s)"
  echo "<2>kjit-suite: step $*" > /dev/kmsg 2>/dev/null
}

ifconfig lo 127.0.0.1 up 2>/dev/null || ip link set lo up
echo 0 > /proc/sys/kernel/kptr_restrict 2>/dev/null

step native
$W "$ITERS" > native.txt 2>&1; chk native_workload grep -q '^timers_sleep_timerfd_itimer *ok' native.txt
$W efault > native-efault.txt 2>&1
n_ef=$(grep -c ' -14$' native-efault.txt)
chk native_efault_count [ "$n_ef" -ge 15 ]

step insmod
insmod ./kjit.ko || { fail insmod; dmesg > dmesg.txt; sync; exit 1; }
note_modules
config_base
sync

# --- entry/exit cost (tool none, one boot) ---------------------------------
# Times are only reported (TCG timing flakes); what is checked is that the
# translated run went through kjit once per call and printed its figure.
step cost
config config_cost none
$W getppid 20000 > cost-native.txt
$K attach getppid > /dev/null
e0=$(stat_of entries)
$W getppid 20000 > cost-kjit.txt
e1=$(stat_of entries)
$K stats > cost-stats.txt
$K detach all > /dev/null
$W getppid 20000 >> cost-native.txt
echo "native: $(tr '\n' ' ' < cost-native.txt) kjit: $(cat cost-kjit.txt)" > cost.txt
cat cost.txt
if [ $((e1 - e0)) -ge 20000 ] && grep -q '^getppid_ns [0-9]' cost-kjit.txt; then
  pass cost_run_translated "kjit_entries=$((e1 - e0)) for 20000 calls"
else
  fail cost_run_translated "kjit_entries=$((e1 - e0)) for 20000 calls; $(cat cost-kjit.txt)"
fi
# Detaching parks the direct ops (an attach/detach loop would otherwise wait
# for RCU-tasks every time); attaching its function again revives it, and
# the ops is unregistered after two quiet seconds.
p0=$(stat_of direct_ops)
$K attach getppid > /dev/null
p1=$(stat_of direct_ops)
$K detach all > /dev/null
j=0; while [ "$(stat_of direct_ops)" != 0 ] && [ $j -lt 30 ]; do sleep 1; j=$((j + 1)); done
p2=$(stat_of direct_ops)
if [ "${p0:-0}" -ge 1 ] && [ "$p1" = "$p0" ] && [ "$p2" = 0 ] && [ $j -ge 1 ]; then
  pass direct_ops_parked_revived_reaped "parked $p0, after re-attach $p1, reaped within ${j}s"
else
  fail direct_ops_parked_revived_reaped "parked $p0, after re-attach $p1, after ${j}s $p2"
fi

# --- livepatch on an attached function -------------------------------------
# kjit's direct ops shares a function with livepatch's IPMODIFY ops
# (ftrace's ops_func), whichever comes first: while the patch is on, its
# replacement runs (natively) and kjit counts the entries sent there.
step livepatch
LP=/sys/kernel/livepatch/kjit_livepatch
lp_on() {  # loads the patch and waits for its transition
  insmod ./kjit_livepatch.ko || return 1
  j=0; while [ "$(cat $LP/transition 2>/dev/null)" != 0 ] && [ $j -lt 60 ]; do sleep 1; j=$((j + 1)); done
  [ "$(cat $LP/transition 2>/dev/null)" = 0 ]
}
lp_off() {  # disables it, waits until it is gone, unloads it
  echo 0 > $LP/enabled 2>/dev/null
  j=0; while [ -d $LP ] && [ $j -lt 60 ]; do sleep 1; j=$((j + 1)); done
  rmmod kjit_livepatch
}
orig_cmdline=$(cat /proc/cmdline)
$K attach cmdline_proc_show > /dev/null || fail livepatch_attach_first
e0=$(stat_of entries); r0=$(stat_of entry_redirected)
c1=$(cat /proc/cmdline); e1=$(stat_of entries)
if lp_on; then
  c2=$(cat /proc/cmdline); r2=$(stat_of entry_redirected)
  lp_off
  c3=$(cat /proc/cmdline); e3=$(stat_of entries)
  if [ "$c1" = "$orig_cmdline" ] && [ "$e1" -gt "$e0" ] && [ "$c2" = kjit-livepatch ] &&
     [ "$r2" -gt "$r0" ] && [ "$c3" = "$orig_cmdline" ] && [ "$e3" -gt "$e1" ]; then
    pass livepatch_after_attach "entries $e0 -> $e1 -> $e3, redirected $r0 -> $r2"
  else
    fail livepatch_after_attach "cmdline '$c1' '$c2' '$c3', entries $e0 $e1 $e3, redirected $r0 $r2"
  fi
else
  fail livepatch_after_attach "livepatch did not load or settle: $(dmesg | grep -i livepatch | tail -n 3)"
  lp_off 2>/dev/null
fi
$K detach all > /dev/null
if lp_on; then
  a=0; $K attach cmdline_proc_show > /dev/null && a=1
  r0=$(stat_of entry_redirected); c4=$(cat /proc/cmdline); r4=$(stat_of entry_redirected)
  $K detach all > /dev/null
  lp_off
  c5=$(cat /proc/cmdline)
  if [ $a = 1 ] && [ "$c4" = kjit-livepatch ] && [ "$r4" -gt "$r0" ] && [ "$c5" = "$orig_cmdline" ]; then
    pass livepatch_before_attach "redirected $r0 -> $r4"
  else
    fail livepatch_before_attach "attached $a, cmdline '$c4' '$c5', redirected $r0 $r4"
  fi
else
  fail livepatch_before_attach "livepatch did not load or settle"
  lp_off 2>/dev/null
fi
sync

# --- another direct-call user on the function -----------------------------
# A second ftrace direct user (what a BPF trampoline is) owns the function:
# kjit's direct ops is refused it, and kjit attaches through its IPMODIFY
# ops, which the other user's ops_func lets share the function.  Both see
# every call; no entry takes the direct fast path.
step direct_peer
addr=$(awk '$3 == "cmdline_proc_show" {print $1; exit}' /proc/kallsyms)
PEER=/sys/module/kjit_direct_peer/parameters/calls
# kjit's own direct ops from the livepatch phase is parked after its detach
# (it still owns the function) until the reaper unregisters it.
j=0; while [ "$(stat_of direct_ops)" != 0 ] && [ $j -lt 30 ]; do sleep 1; j=$((j + 1)); done
if insmod ./kjit_direct_peer.ko addr=0x"$addr" 2> peer-insmod.txt; then
  f0=$(stat_of fast_entries); e0=$(stat_of entries); p0=$(cat $PEER)
  a=0; $K attach cmdline_proc_show > /dev/null && a=1
  c1=$(cat /proc/cmdline); c2=$(cat /proc/cmdline); c3=$(cat /proc/cmdline)
  f1=$(stat_of fast_entries); e1=$(stat_of entries); p1=$(cat $PEER)
  $K detach all > /dev/null
  rmmod kjit_direct_peer
  if [ $a = 1 ] && [ "$c1$c2$c3" = "$orig_cmdline$orig_cmdline$orig_cmdline" ] &&
     [ $((e1 - e0)) -ge 3 ] && [ "$f1" = "$f0" ] && [ $((p1 - p0)) -ge 3 ]; then
    pass direct_peer_ipmodify_fallback "entries +$((e1 - e0)), peer calls +$((p1 - p0)), fast entries +$((f1 - f0))"
  else
    fail direct_peer_ipmodify_fallback "attached $a, entries $e0 -> $e1, peer $p0 -> $p1, fast $f0 -> $f1"
  fi
else
  fail direct_peer_ipmodify_fallback "kjit_direct_peer did not load ($(stat_of direct_ops) direct ops after ${j}s): $(tr '\n' ' ' < peer-insmod.txt)"
fi
sync

# --- every tool, every system call ----------------------------------------
for tool in icount bbcount calltrace branch_hints lock_contention entry_count callstack; do
  step "tool $tool, all system calls"
  config "config_$tool" "$tool"
  $K attach all-syscalls > "attach-$tool.txt" 2>&1 || fail "attach_all_$tool"
  tail -n1 "attach-$tool.txt"
  $W "$ITERS" > "wl-$tool.txt" 2>&1
  $W efault > "efault-$tool.txt" 2>&1
  $K stats > "stats-$tool.txt"
  $K departures > "departures-$tool.txt" 2>&1
  $K show > "report-$tool.txt" 2>&1
  $K show --json > "report-$tool.json" 2>&1
  $K detach all > /dev/null
  chk "workload_same_$tool" cmp -s native.txt "wl-$tool.txt"
  chk "efault_same_$tool" cmp -s native-efault.txt "efault-$tool.txt"
  e=$(awk '$1=="entries"{print $2}' "stats-$tool.txt")
  chk "entered_$tool" [ "${e:-0}" -gt 1000 ]
  sync
done
# Every entry ends in the cache or is counted as having left it, and the
# share that completed there is reported (the line goes to the host's log).
# Checked: entries completed, and the counts never exceed the entries.
for tool in icount bbcount calltrace branch_hints lock_contention entry_count callstack; do
  line=$(grep '^completion ' "stats-$tool.txt")
  if awk '$1=="entered"{e=$2} $1=="completed"{c=$2} $1 ~ /^left_|^task_exits$|^sleep_lost$/{l+=$2}
          END{exit !(e > 0 && c > 0 && c + l <= e)}' "stats-$tool.txt"; then
    pass "completion_reported_$tool" "$line"
  else
    fail "completion_reported_$tool" "$line"
  fi
done
# The all-syscalls workload is followed to the end: at least 99.9% of its
# entries complete in the cache (under icount); what left is listed.
pct=$(sed -n 's/^completion \([0-9.]*\)%.*/\1/p' stats-icount.txt)
if awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 99.9) }'; then
  pass completion_all_syscalls "$(grep '^completion ' stats-icount.txt)"
else
  fail completion_all_syscalls "$(grep '^completion ' stats-icount.txt); $(grep -v '^completed' departures-icount.txt | tr '\n' ';')"
fi
# the text report starts with the completion line, the JSON one carries it
chk report_text_completion grep -q '^completion [0-9.]*% ([1-9]' report-icount.txt
chk report_json_completion grep -q '"completion": {"entered": [1-9]' report-icount.json
if grep -q '^instructions *[1-9]' report-icount.txt; then pass icount_nonzero "$(cat report-icount.txt)"; else fail icount_nonzero; fi
if grep -q 'blocks executed [1-9]' report-bbcount.txt; then pass bbcount_nonzero "$(head -1 report-bbcount.txt)"; else fail bbcount_nonzero; fi
chk branch_hints_nonzero grep -q '^executed *[1-9]' report-branch_hints.txt
if grep -q '^cmpxchg_attempts *[1-9]' report-lock_contention.txt; then pass lock_contention_nonzero "$(tr '\n' ' ' < report-lock_contention.txt)"; else fail lock_contention_nonzero; fi
chk entry_count_openat grep -q '__x64_sys_openat' report-entry_count.txt
chk calltrace_has_do_sys_openat2 grep -q 'do_sys_openat2' report-calltrace.txt

# Entry by the direct-call trampoline (the default): the icount tool needs
# nothing at entry but the jump, so after each function's first entry the
# trampoline enters without calling C.
do_=$(awk '$1=="direct_ops"{print $2}' stats-icount.txt)
fe=$(awk '$1=="fast_entries"{print $2}' stats-icount.txt)
e=$(awk '$1=="entries"{print $2}' stats-icount.txt)
if [ "${do_:-0}" -ge 1 ] && [ "${fe:-0}" -gt 0 ] && [ "${fe:-0}" -le "${e:-0}" ]; then
  pass direct_entry_fast_path "direct_ops=$do_ fast_entries=$fe of entries=$e"
else
  fail direct_entry_fast_path "direct_ops=$do_ fast_entries=$fe of entries=$e"
fi
# The callstack tool records every entry in C: none may take the fast path.
fe=$(awk '$1=="fast_entries"{print $2}' stats-callstack.txt)
e=$(awk '$1=="entries"{print $2}' stats-callstack.txt)
fe0=$(awk '$1=="fast_entries"{print $2}' stats-branch_hints.txt 2>/dev/null)
fe1=$(awk '$1=="fast_entries"{print $2}' stats-entry_count.txt 2>/dev/null)
if [ "${e:-0}" -gt 1000 ] && [ "${fe:-1}" = "${fe1:-x}" ]; then
  pass callstack_entries_all_in_c "fast_entries unchanged ($fe) over $e callstack entries"
else
  fail callstack_entries_all_in_c "fast_entries $fe1 -> $fe over $e entries (branch_hints: $fe0)"
fi

# --- checkable counts on openat -------------------------------------------
step "openat call trace and block counts"
config config_callstack_openat callstack
$K attach openat > /dev/null
cat /proc/version > /dev/null; $W 1 > /dev/null 2>&1
$K show --folded > openat.folded
$K detach all > /dev/null
for f in do_sys_openat2 getname do_filp_open; do
  chk "openat_stack_has_$f" grep -q "^__x64_sys_openat;.*$f" openat.folded
done
config config_bbcount_openat bbcount
$K attach openat > /dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do cat /proc/version > /dev/null; done
$K stats > stats-bb-openat.txt
$K blocks > blocks-openat.txt
$K blocks --json > blocks-openat.json
$K detach all > /dev/null
# the entry block of __x64_sys_openat (+0x5, after the fentry NOP) runs once per call
first=$(awk '$3 ~ /^__x64_sys_openat\+0x5$/ {print $2}' blocks-openat.txt)
chk openat_entry_block_counted [ "${first:-0}" -ge 10 ]
nb=$(grep -c '^0x' blocks-openat.txt)
bb=$(awk '$1=="blocks_built"{print $2}' stats-bb-openat.txt)
fb=$(awk '$1=="fallbacks"{print $2}' stats-bb-openat.txt)
# a block start can be instrumented (and listed) by a build that is then
# abandoned or retried (extable mirror, cache switch), so the listed starts
# are bounded by the instructions translated, not by the blocks built
it=$(awk '$1=="insns_translated"{print $2}' stats-bb-openat.txt)
if [ "$nb" -gt 5 ] && [ "$nb" -le "${it:-0}" ]; then
  pass blocks_listed_le_translated "listed=$nb built=$bb fallbacks=$fb insns=$it"
else
  fail blocks_listed_le_translated "listed=$nb built=$bb fallbacks=$fb insns=$it"
fi

# --- invocations that sleep are followed to their end -----------------------
# Each call sleeps (woken by a child process, a timer or a resolved fault)
# and then runs functions that only run after the wake-up: with bbcount on
# the system call, their blocks must have counts, and so must the block
# that starts at the return from __schedule into schedule (SCHED_RET,
# computed on the host from vmlinux).
step "blocking calls followed through their sleeps"
config config_bbcount_blocking bbcount
# After the wake-up on the mutex: PREEMPT_RT builds mutexes on rtmutex,
# where the waiter leaves the lock's waiter tree (rb_erase) when it takes
# the lock, instead of __mutex_remove_waiter.
mutex_after=__mutex_remove_waiter
case "$(uname -v)" in *PREEMPT_RT*) mutex_after=rb_erase ;; esac
for m in read:read:finish_wait,copy_page_to_iter,touch_atime \
         poll:poll:poll_freewait,remove_wait_queue \
         nanosleep:nanosleep,clock_nanosleep:hrtimer_try_to_cancel,hrtimer_active \
         futex:futex:futex_unqueue,plist_del \
         wait4:wait4:release_task,detach_pid \
         write:write:finish_wait,copy_page_from_iter \
         "mutex:read:$mutex_after,copy_page_to_iter,touch_atime"; do
  mode=${m%%:*} rest=${m#*:}; sc=${rest%%:*} fns="${rest#*:},${SCHED_RET:-schedule+0x?}"
  # shellcheck disable=SC2046  # one argument per system call
  $K attach $(echo "$sc" | tr "," " ") > /dev/null
  $K reset > /dev/null
  ./blocking "$mode" 3 > "blocking-$mode.txt" 2>&1
  $K stats > "stats-blocking-$mode.txt"
  $K blocks > "blocks-blocking-$mode.txt"
  $K detach all > /dev/null
  chk "blocking_${mode}_ran" grep -q "^$mode ok" "blocking-$mode.txt"
  missing=""
  for f in $(echo "$fns" | tr ',' ' '); do
    # a function: any of its blocks; schedule+0x..: that block exactly
    n=$(awk -v f="$f" '$3 == f || (f !~ /[+]/ && index($3, f "+") == 1) {s += $2} END{print s + 0}' \
          "blocks-blocking-$mode.txt")
    [ "$n" -gt 0 ] || missing="$missing $f"
  done
  res=$(awk '$1=="sleeps_resumed"{print $2}' "stats-blocking-$mode.txt")
  if [ -z "$missing" ] && [ "${res:-0}" -gt 0 ]; then
    pass "followed_$mode" "after the wake-up: $fns; sleeps_resumed=$res; $(grep '^completion' "stats-blocking-$mode.txt")"
  else
    fail "followed_$mode" "no count after the wake-up for:$missing; sleeps_resumed=${res:-?}"
  fi
done

# A task asleep in an instrumented call while the engine is re-created
# (detach, config) belongs to the engine that is gone: when it wakes it
# continues natively (left_sleep_off), not in the new engine's cache, where
# it would run on past its entry's return as if its caller were attached.
step "a sleeper of a re-created engine continues natively"
$K attach nanosleep clock_nanosleep > /dev/null
sleep 3 & sp=$!
sleep 1
asleep=$(stat_of sleeping)
$K detach all > /dev/null
$K config --tool icount > /dev/null 2>&1 || true
wait "$sp"; src=$?
$K stats > stats-recreated-sleeper.txt
res=$(awk '$1=="sleeps_resumed"{print $2}' stats-recreated-sleeper.txt)
off=$(awk '$1=="left_sleep_off"{print $2}' stats-recreated-sleeper.txt)
if [ "${asleep:-0}" -ge 1 ] && [ "$src" = 0 ] && [ "${res:-1}" = 0 ] && [ "${off:-0}" -ge 1 ]; then
  pass recreated_engine_sleeper "asleep=$asleep then sleeps_resumed=$res left_sleep_off=$off"
else
  fail recreated_engine_sleeper "asleep=$asleep exit=$src sleeps_resumed=${res:-?} left_sleep_off=${off:-?} (want >=1, 0, 0, >=1)"
fi

# A task asleep in an instrumented call has only original return
# addresses on its stack (nothing in kjit's module, code cache included).
step "a sleeping task's stack"
$K attach nanosleep clock_nanosleep > /dev/null
sleep 3 & sp=$!
sleep 1
cat "/proc/$sp/stack" > sleeping-stack.txt 2>&1
wait "$sp"
$K detach all > /dev/null
if grep -q hrtimer_nanosleep sleeping-stack.txt && ! grep -q '\[kjit\]' sleeping-stack.txt &&
   ! grep -v -q '^\[<[0-9a-f]*>\] [A-Za-z_.0-9]*+0x[0-9a-f]*/0x[0-9a-f]*$' sleeping-stack.txt; then
  pass sleeping_stack_original "$(tr '\n' ' ' < sleeping-stack.txt)"
else
  fail sleeping_stack_original "$(tr '\n' ' ' < sleeping-stack.txt)"
fi

# --- config while a capture is armed ------------------------------------------
# Re-creating the engine would drop the capture's plugin without a word:
# config must refuse (EBUSY; the module logs that the capture was why, not
# the capture's attachment, which alone also gives EBUSY) and the capture
# must still record its getppid.
# The capture is armed when the module says so (attaching and arming take
# a while under TCG); the child's sleep starts only then.
step "config refused while a capture is armed"
armed0=$(dmesg | grep -c 'capture armed for __x64_sys_getppid')
$K capture --syscall getppid --count 1 -o busy.kjitcap -- sh -c 'sleep 3; exec ./workload getppid 3' > capture-busy.txt 2>&1 & cp=$!
w=0
while [ "$(dmesg | grep -c 'capture armed for __x64_sys_getppid')" = "$armed0" ] && [ $w -lt 100 ]; do
  sleep 0.2; w=$((w + 1))
done
if $K config --tool icount > config-busy.txt 2>&1; then cfg_rc=0; else cfg_rc=1; fi
wait "$cp"; cap_rc=$?
if [ $cfg_rc = 1 ] && grep -q 'Device or resource busy' config-busy.txt \
   && dmesg | grep -q 'configure refused: a capture is in progress'; then
  pass config_refused_while_capture_armed "$(cat config-busy.txt)"
else
  fail config_refused_while_capture_armed "rc $cfg_rc: $(tr '\n' ' ' < config-busy.txt)"
fi
if [ $cap_rc = 0 ] && grep -q '1 invocation(s) written' capture-busy.txt; then
  pass capture_survives_config "$(tail -1 capture-busy.txt)"
else
  fail capture_survives_config "rc $cap_rc: $(tr '\n' ' ' < capture-busy.txt)"
fi
config config_after_capture bbcount

# --- hot kernel functions with many callers --------------------------------
# Every caller's return address becomes a stop address (about 200 here);
# more than 64 shows they are not capped at a small fixed table, past which
# entries from further call sites would run natively.  Allocator and mutex
# functions also run in softirq and under locks.
step "allocator and mutex functions: many call sites"
config config_icount_hot icount
$K attach kfree kmem_cache_free kmem_cache_alloc __kmalloc kmalloc_trace mutex_lock mutex_unlock > attach-hot.txt 2>&1 \
  || fail attach_hot_functions "$(tr '\n' ' ' < attach-hot.txt)"
$W "$ITERS" > wl-hot.txt 2>&1
$W efault > efault-hot.txt 2>&1
$K stats > stats-hot.txt
$K detach all > /dev/null
chk workload_same_hot_functions cmp -s native.txt wl-hot.txt
chk efault_same_hot_functions cmp -s native-efault.txt efault-hot.txt
sa=$(awk '$1=="stop_addresses"{print $2}' stats-hot.txt)
e=$(awk '$1=="entries"{print $2}' stats-hot.txt)
if [ "${sa:-0}" -gt 64 ] && [ "${e:-0}" -gt 1000 ]; then
  pass hot_functions_many_call_sites "stop_addresses=$sa entries=$e"
else
  fail hot_functions_many_call_sites "stop_addresses=$sa entries=$e"
fi

# --- hazards ----------------------------------------------------------------
step hazards
config config_icount_hazards icount
for f in __schedule exc_page_fault do_int3 notify_die kjit_gate_direct; do
  if $K attach "$f" > "attach-refused-$f.txt" 2>&1; then fail "refused_$f"; $K detach all; else pass "refused_$f" "$(cat "attach-refused-$f.txt")"; fi
done
# another ftrace user on the same function
T=/sys/kernel/tracing
$K attach getppid > /dev/null
# ftrace lists the site under one of its aliases (__do_sys_getppid here)
FN=$(grep -m1 -E '^(__x64_sys_getppid|__do_sys_getppid)' $T/available_filter_functions | cut -d' ' -f1)
[ -n "$FN" ] || FN=__do_sys_getppid
echo "ftrace name: $FN"
echo "$FN" > $T/set_ftrace_filter
echo function > $T/current_tracer
e0=$(stat_of entries)
$W getppid 200 > /dev/null
e1=$(stat_of entries)
n=$(grep -c "sys_getppid" $T/trace)     # before `nop`: switching tracers clears the buffer
echo nop > $T/current_tracer
echo > $T/set_ftrace_filter
echo > $T/trace
if [ "$n" -ge 200 ] && [ $((e1 - e0)) -ge 200 ]; then
  pass ftrace_function_tracer_coexists "trace=$n kjit_entries=$((e1 - e0))"
else
  fail ftrace_function_tracer_coexists "trace=$n kjit_entries=$((e1 - e0)) $(head -c 300 $T/trace | tail -c 150)"
fi
# the other order: tracer first, then kjit
echo "$FN" > $T/set_ftrace_filter; echo function > $T/current_tracer
$K detach all > /dev/null; $K attach getppid > /dev/null
e0=$(stat_of entries); $W getppid 100 > /dev/null; e1=$(stat_of entries)
n=$(grep -c "sys_getppid" $T/trace)     # before `nop`: switching tracers clears the buffer
echo nop > $T/current_tracer
if [ $((e1 - e0)) -ge 100 ] && [ "$n" -ge 100 ]; then
  pass ftrace_tracer_first_coexists "trace=$n kjit_entries=$((e1 - e0))"
else
  fail ftrace_tracer_first_coexists "trace=$n kjit_entries=$((e1 - e0))"
fi
echo > $T/set_ftrace_filter; echo > $T/trace
$K detach all > /dev/null
# stack of a task sleeping inside an instrumented syscall: it proves
# something only if the sleeps really entered kjit
$K attach nanosleep clock_nanosleep > /dev/null
e0=$(stat_of entries)
sleep 3 & sp=$!
sleep 1
cat /proc/$sp/stack > sleeping-stack.txt 2>&1
wait $sp
e1=$(stat_of entries)
$K detach all > /dev/null
if [ $((e1 - e0)) -ge 1 ] && ! grep -q 'kjit' sleeping-stack.txt; then
  pass stack_has_original_addresses "kjit_entries=$((e1 - e0)) $(tr '\n' ' ' < sleeping-stack.txt)"
else
  fail stack_has_original_addresses "kjit_entries=$((e1 - e0)) $(tr '\n' ' ' < sleeping-stack.txt)"
fi
# __builtin_return_address from instrumented code
insmod ./kjit_hazard.ko
$K attach kjit_hazard_entry > /dev/null || fail attach_module_function
e0=$(stat_of entries)
echo ra > /sys/module/kjit_hazard/parameters/cmd
e1=$(stat_of entries)
ra=$(cat /sys/module/kjit_hazard/parameters/ra)
case "$ra" in
  ok*) if [ $((e1 - e0)) -ge 1 ]; then pass return_address_original "$ra"; else fail return_address_original "not entered"; fi ;;
  *) fail return_address_original "$ra" ;;
esac
# static keys flipping under translated code: tracepoints inside openat's path
$K detach all > /dev/null
config config_bbcount_static_keys bbcount
$K attach openat read close > /dev/null
$W "$ITERS" > sk-before.txt 2>&1
te0=$(stat_of text_events)
echo 1 > $T/events/kmem/kmem_cache_alloc/enable
echo 1 > $T/events/kmem/kfree/enable
echo > $T/trace
$W "$ITERS" > sk-on.txt 2>&1
cat /proc/version > /dev/null
n_ev=$(grep -c kmem_cache_alloc $T/trace)
echo 0 > $T/events/kmem/kmem_cache_alloc/enable
echo 0 > $T/events/kmem/kfree/enable
$W "$ITERS" > sk-off.txt 2>&1
te1=$(stat_of text_events); tf=$(stat_of text_flushes)
$K detach all > /dev/null
echo > $T/trace
chk static_key_results_same sh -c "cmp -s native.txt sk-before.txt && cmp -s native.txt sk-on.txt && cmp -s native.txt sk-off.txt"
if [ $((te1 - te0)) -ge 2 ] && [ "${tf:-0}" -ge 1 ]; then pass static_key_flush_seen; else fail static_key_flush_seen "text_events=$((te1 - te0)) text_flushes=${tf:-?}"; fi
chk static_key_tracepoint_fires [ "$n_ev" -ge 1 ]

# --- unload while a task sleeps in a page fault taken in the cache -----------
# RCU-tasks counts a task sleeping in a fault handler as quiescent, but the
# fault's frame holds a cache address: detach/rmmod must wait for it.
step "unload waits for a task asleep in a fault taken in the cache"
config config_icount_uffd icount
# The fault is in the cache unless the task left it before (a cond_resched
# in down_read, for instance, continues natively): /proc/PID/task/*/stack
# shows the exception frame's cache address.  Up to five tries.
try=0; in_cache=0
$K attach newuname > /dev/null
e0=$(stat_of entries)
while [ $try -lt 5 ] && [ $in_cache = 0 ]; do
  rm -f uffd-blocked uffd-release unload-rc
  ./uffd_fault . > uffd.txt 2>&1 & up=$!
  n=0; while [ ! -f uffd-blocked ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
  cat /proc/$up/task/*/stack > uffd-stack.txt 2>/dev/null
  grep -q kjit_cache_area uffd-stack.txt && in_cache=1
  [ $in_cache = 1 ] || { touch uffd-release; wait "$up"; }
  try=$((try + 1))
done
e1=$(stat_of entries)
if [ -f uffd-blocked ] && [ $((e1 - e0)) -ge 1 ] && [ $in_cache = 1 ]; then
  pass uffd_blocked_in_instrumented_uname
else
  fail uffd_blocked_in_instrumented_uname "kjit_entries=$((e1 - e0)) in_cache=$in_cache"
fi
( $K detach all > /dev/null; rmmod kjit; echo $? > unload-rc ) & dp=$!
sleep 4
chk unload_waits_for_sleeping_fault [ ! -f unload-rc ]
touch uffd-release
wait "$up"; wait "$dp"
chk uffd_result_after_unload grep -q "uffd ok" uffd.txt
chk unload_after_fault_resolved [ "$(cat unload-rc 2>/dev/null)" = 0 ]
insmod ./kjit.ko || fail insmod_after_uffd
config config_icount_after_reload icount

# --- an attach waits while config quiesces the cache -------------------------
# config checks that nothing is attached, then waits until no task can be in
# the cache (here: one asleep in a fault taken there), then re-creates the
# engine.  An attach made meanwhile must wait for it, and land on the new
# engine: it would otherwise send entries into the engine being replaced.
step "attach waits while config quiesces the cache"
try=0; in_cache=0
$K attach newuname > /dev/null
while [ $try -lt 5 ] && [ $in_cache = 0 ]; do
  rm -f uffd-blocked uffd-release
  ./uffd_fault . > uffd-cfg.txt 2>&1 & up=$!
  n=0; while [ ! -f uffd-blocked ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
  cat /proc/$up/task/*/stack > uffd-cfg-stack.txt 2>/dev/null
  grep -q kjit_cache_area uffd-cfg-stack.txt && in_cache=1
  [ $in_cache = 1 ] || { touch uffd-release; wait "$up"; }
  try=$((try + 1))
done
$K detach all > /dev/null
rm -f cfg-rc att-rc
( $K config --tool bbcount > cfg-out.txt 2>&1; echo $? > cfg-rc ) & cp=$!
sleep 2
( $K attach getppid > att-out.txt 2>&1; echo $? > att-rc ) & ap=$!
sleep 3
if [ $in_cache = 1 ] && [ ! -f cfg-rc ] && [ ! -f att-rc ]; then
  pass attach_waits_for_config
else
  fail attach_waits_for_config "in_cache=$in_cache config_rc=$(cat cfg-rc 2>/dev/null) attach_rc=$(cat att-rc 2>/dev/null)"
fi
touch uffd-release
wait "$up"; wait "$cp"; wait "$ap"
chk uffd_result_after_config grep -q "uffd ok" uffd-cfg.txt
$W getppid 10 > /dev/null
$K blocks > cfg-att-blocks.txt 2>&1
$K detach all > /dev/null
if [ "$(cat cfg-rc 2>/dev/null)" = 0 ] && [ "$(cat att-rc 2>/dev/null)" = 0 ] &&
   [ "$(stat_of tool)" = bbcount ] && grep -q ' __x64_sys_getppid+' cfg-att-blocks.txt; then
  pass attach_after_config_on_new_engine
else
  fail attach_after_config_on_new_engine "config_rc=$(cat cfg-rc 2>/dev/null) attach_rc=$(cat att-rc 2>/dev/null) tool=$(stat_of tool): $(tr '\n' ' ' < cfg-out.txt) $(tr '\n' ' ' < att-out.txt)"
fi
config config_icount_after_attach_wait icount

# --- the IPMODIFY entry path (direct_entry=0) ---------------------------------
# Where a direct call cannot be used (another direct user owns the function)
# entries go through kjit's IPMODIFY ftrace_ops: the same workload, the same
# results.
step "IPMODIFY entry path"
rmmod kjit || fail rmmod_before_ipmodify
insmod ./kjit.ko direct_entry=0 || fail insmod_ipmodify
config config_ipmodify icount
$K attach all-syscalls > attach-ipmodify.txt 2>&1 || fail attach_all_ipmodify
$W "$ITERS" > wl-ipmodify.txt 2>&1
$W efault > efault-ipmodify.txt 2>&1
$K stats > stats-ipmodify.txt
$K detach all > /dev/null
chk workload_same_ipmodify cmp -s native.txt wl-ipmodify.txt
chk efault_same_ipmodify cmp -s native-efault.txt efault-ipmodify.txt
e=$(awk '$1=="entries"{print $2}' stats-ipmodify.txt)
do_=$(awk '$1=="direct_ops"{print $2}' stats-ipmodify.txt)
fe=$(awk '$1=="fast_entries"{print $2}' stats-ipmodify.txt)
pct=$(sed -n 's/^completion \([0-9.]*\)%.*/\1/p' stats-ipmodify.txt)
if [ "${e:-0}" -gt 200 ] && [ "$do_" = 0 ] && [ "$fe" = 0 ] && awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 99.9) }'; then
  pass ipmodify_entries "entries=$e direct_ops=$do_ fast_entries=$fe; $(grep '^completion ' stats-ipmodify.txt)"
else
  fail ipmodify_entries "entries=$e direct_ops=$do_ fast_entries=$fe; $(grep '^completion ' stats-ipmodify.txt)"
fi
rmmod kjit || fail rmmod_after_ipmodify
insmod ./kjit.ko || fail insmod_after_ipmodify

# --- full tables and rings are reported, not silent ---------------------------
# A table of 4 blocks, rings of 16 events and a table of 4 routines fill at
# once: report, blocks and calls must say how much was dropped, in text and
# JSON.
step "dropped counts with tiny tables"
rmmod kjit || fail rmmod_before_tiny_tables
insmod ./kjit.ko tool=2 bb_max=4 ring_size=16 cs_size=16 ec_max=2 || fail insmod_tiny_tables
$K attach openat > /dev/null
for i in 1 2 3; do cat /proc/version > /dev/null; done
$K show > dropped-report-bbcount.txt 2>&1
$K show --json > dropped-report-bbcount.json 2>&1
$K blocks > dropped-blocks.txt 2>&1
$K blocks --json > dropped-blocks.json 2>&1
$K detach all > /dev/null
dropped_ok() {  # FILE...: every file says dropped N with N > 0
  for f in "$@"; do
    grep -Eq '^dropped [1-9][0-9]*$|"dropped": [1-9][0-9]*' "$f" || return 1
  done
}
if dropped_ok dropped-report-bbcount.txt dropped-report-bbcount.json dropped-blocks.txt dropped-blocks.json; then
  pass bbcount_reports_dropped "$(grep -h '^dropped' dropped-report-bbcount.txt)"
else
  fail bbcount_reports_dropped "$(grep -h dropped dropped-report-bbcount.txt dropped-blocks.txt | tr '\n' ' ')"
fi
for tool in callstack calltrace entry_count; do
  config "config_${tool}_tiny_table" "$tool"
  $K attach openat > /dev/null
  for i in 1 2 3; do cat /proc/version > /dev/null; done
  $K show > "dropped-report-$tool.txt" 2>&1
  $K show --json > "dropped-report-$tool.json" 2>&1
  $K calls > "dropped-calls-$tool.txt" 2>&1
  $K calls --json > "dropped-calls-$tool.json" 2>&1
  $K detach all > /dev/null
  if dropped_ok "dropped-report-$tool.txt" "dropped-report-$tool.json" "dropped-calls-$tool.txt" "dropped-calls-$tool.json"; then
    pass "${tool}_reports_dropped" "$(grep -h '^dropped' "dropped-report-$tool.txt")"
  else
    fail "${tool}_reports_dropped" "$(grep -h dropped "dropped-report-$tool.txt" "dropped-calls-$tool.txt" | tr '\n' ' ')"
  fi
done
rmmod kjit || fail rmmod_after_tiny_tables
insmod ./kjit.ko || fail insmod_after_tiny_tables
config_base

# --- bbcount: one counter per original block across flushes ------------------
# Every flush re-translates getppid's blocks: each translation must add to
# the block's one counter.  counters (the module's records) equal to
# distinct (addresses) says no block got a second one; each getppid block
# ran once per call, before and after the flushes.
step "bbcount keeps one counter per block across flushes"
config config_bbcount_flushes bbcount
$K attach getppid > /dev/null
f0=$(stat_of flushes)
for round in 1 2 3; do
  $W getppid 100 > /dev/null
  [ $round = 3 ] || $K flush
done
f1=$(stat_of flushes)
$K show > bb-flush-report.txt 2>&1
$K blocks > bb-flush-blocks.txt 2>&1
$K detach all > /dev/null
bb_distinct=$(sed -n 's/.*distinct \([0-9]*\), counters \([0-9]*\).*$/\1/p' bb-flush-report.txt)
bb_counters=$(sed -n 's/.*distinct \([0-9]*\), counters \([0-9]*\).*$/\2/p' bb-flush-report.txt)
bb_getppid=$(grep -c ' __x64_sys_getppid+' bb-flush-blocks.txt)
bb_short=$(awk '/ __x64_sys_getppid\+/ && $2 < 300' bb-flush-blocks.txt | wc -l)
if [ $((f1 - f0)) -ge 2 ] && [ -n "$bb_counters" ] && [ "$bb_counters" = "$bb_distinct" ] &&
   [ "$bb_getppid" -ge 1 ] && [ "$bb_short" = 0 ]; then
  pass bbcount_one_counter_per_block "flushes=$((f1 - f0)) distinct=$bb_distinct counters=$bb_counters getppid_blocks=$bb_getppid"
else
  fail bbcount_one_counter_per_block "flushes=$((f1 - f0)) distinct=$bb_distinct counters=$bb_counters getppid_blocks=$bb_getppid under_300=$bb_short; $(head -1 bb-flush-report.txt)"
fi

# --- plugin modules (Figure 3 and branch hints) ----------------------------
step "plugin modules"
config config_none_plugins none
insmod ./kjit_fig3_icount.ko || fail insmod_fig3
$K attach clone > /dev/null
$W forks 20 > forks.txt
c=$(cat /sys/module/kjit_fig3_icount/parameters/count)
$K detach all > /dev/null
rmmod kjit_fig3_icount || fail rmmod_fig3
chk plugin_fig3_icount_clone [ "${c:-0}" -gt 1000 ]
echo "fig3 clone instructions (20 forks): $c" > fig3.txt
insmod ./kjit_branch_hints.ko || fail insmod_branch_hints
$K attach openat > /dev/null
for i in 1 2 3 4 5; do cat /proc/version > /dev/null; done
r=$(cat /sys/module/kjit_branch_hints/parameters/result)
$K detach all > /dev/null
rmmod kjit_branch_hints || fail rmmod_branch_hints
# shellcheck disable=SC2086  # the module's result is a list of counts, split on purpose
set -- $r
if [ "${1:-0}" -gt 10 ] && [ $(($3 + $4)) -eq "${1:-0}" ]; then pass plugin_branch_hints_openat; else fail plugin_branch_hints_openat "$r"; fi
echo "branch_hints module on openat: $r" >> fig3.txt

# --- tiny cache under load ---------------------------------------------------
step "tiny cache"
config config_bbcount_tiny bbcount 16
$K attach all-syscalls > /dev/null
# Rounds of two concurrent workloads until at least 5 reclaims happened
# (each waits for an RCU-tasks grace period, ~0.15 s under TCG); every
# round's results must equal native.  A full cache declines entries until
# the reclaim work item has run, so how many reclaims a round triggers
# depends on timing: up to 40 rounds (a round takes about 0.4 s).
round=0; tiny_bad=0; fl=0
while [ $round -lt 40 ] && [ "${fl:-0}" -lt 5 ]; do
  $W "$ITERS" > tiny-a.txt 2>&1 & b1=$!
  $W "$ITERS" > tiny-b.txt 2>&1
  $W efault > tiny-efault.txt 2>&1
  wait "$b1"
  cmp -s native.txt tiny-a.txt && cmp -s native.txt tiny-b.txt && cmp -s native-efault.txt tiny-efault.txt || tiny_bad=$((tiny_bad + 1))
  fl=$(stat_of reclaims)
  round=$((round + 1))
done
$K stats > stats-tiny.txt
$K detach all > /dev/null
chk tiny_cache_same [ $tiny_bad -eq 0 ]
echo "tiny cache: $round rounds, $fl reclaims"
chk tiny_cache_flushed [ "${fl:-0}" -ge 5 ]
config config_icount_full_cache icount 0

if [ "$Q" != 1 ]; then
# --- start/stop 100 times under load ------------------------------------------
step "start/stop x100 under load"
# 100 cycles of attach (5 system calls) / detach, then 3 of all-syscalls
( i=0; while [ ! -f stop-load ]; do timeout 300 $W 1 > load-$i.txt 2>&1 || echo "load workload $i: status $?" >> load-status.txt; i=$((i + 1)); [ $i -ge 8 ] && i=0; done ) & lp=$!
ss_fail=0
i=0
while [ $i -lt 100 ]; do
  $K attach openat read write close getppid > /dev/null || ss_fail=$((ss_fail + 1))
  $K detach all > /dev/null || ss_fail=$((ss_fail + 1))
  i=$((i + 1))
done
i=0
while [ $i -lt 3 ]; do
  $K attach all-syscalls > /dev/null 2>&1 || ss_fail=$((ss_fail + 1))
  $K detach all > /dev/null || ss_fail=$((ss_fail + 1))
  i=$((i + 1))
done
echo "start/stop failures: $ss_fail"
touch stop-load; wait "$lp"; rm -f stop-load
bad=0; for f in load-*.txt; do cmp -s native.txt "$f" || bad=$((bad + 1)); done
chk start_stop_100 [ $((ss_fail + bad)) -eq 0 ]

# --- load/unload 20 times under load ------------------------------------------
step "insmod/rmmod x20 under load"
rmmod kjit_hazard
rmmod kjit || fail rmmod_before_loop
( i=0; while [ ! -f stop-load ]; do timeout 300 $W 1 > uload-$i.txt 2>&1 || echo "uload workload $i: status $?" >> load-status.txt; i=$((i + 1)); [ $i -ge 8 ] && i=0; done ) & lp=$!
# tasks that sleep and wake in instrumented calls all along (followed
# sleeps across unloads and epoch reuse)
( while [ ! -f stop-load ]; do for m in read nanosleep futex poll; do ./blocking "$m" 2 >> sleepers.txt 2>&1; done; done ) & bp=$!
lu_fail=0
i=0
while [ $i -lt 20 ]; do
  insmod ./kjit.ko || lu_fail=$((lu_fail + 1))
  $K attach openat read write close getppid pipe2 newfstat mmap clone wait4 nanosleep clock_nanosleep futex poll > /dev/null || lu_fail=$((lu_fail + 1))
  sleep 0.3
  rmmod kjit || lu_fail=$((lu_fail + 1))
  i=$((i + 1))
done
touch stop-load; wait "$lp"; wait "$bp"; rm -f stop-load
bad=0; for f in uload-*.txt; do cmp -s native.txt "$f" || bad=$((bad + 1)); done
nsl=$(grep -c ' ok$' sleepers.txt); bsl=$(grep -c -v ' ok$' sleepers.txt)
if [ $((lu_fail + bad + bsl)) -eq 0 ] && [ "$nsl" -gt 0 ]; then
  pass load_unload_20 "sleeping callers: $nsl runs ok"
else
  fail load_unload_20 "failures $lu_fail, workload diffs $bad, sleeping callers: $nsl ok, $bsl not"
fi
insmod ./kjit.ko
insmod ./kjit_hazard.ko
fi

# --- kernel log before the deliberate WARN ------------------------------------
step "log check"
dmesg > dmesg.txt
cat /proc/sys/kernel/tainted > tainted.txt
if ./kernel-log-errors.sh dmesg.txt > bad-log.txt; then
  fail kernel_log_clean "$(head -3 bad-log.txt | tr '\n' ' ')"
else
  pass kernel_log_clean
fi
# Out-of-tree (O), unsigned (E), and the suite's own livepatch (K).
t=$(cat tainted.txt)
chk taint_only_OEK [ $((t & ~(4096 | 8192 | 32768))) -eq 0 ]
$K stats > stats-final.txt

# --- WARN inside instrumented code (last: it taints with W) -------------------
step "WARN at the original address"
$K attach kjit_hazard_entry > /dev/null
echo warn > /sys/module/kjit_hazard/parameters/cmd
$K detach all > /dev/null
dmesg | grep -A3 'WARNING:' > warn.txt
if grep -q 'kjit_hazard_entry+0x' warn.txt && ! grep -q 'kjit_cache_area' warn.txt; then
  pass warn_reports_original_address "$(grep -m1 -E 'RIP|WARNING' warn.txt)"
else
  fail warn_reports_original_address "$(head -2 warn.txt | tr '\n' ' ')"
fi
# after the step marker the log may hold that WARN's splat and nothing else
dmesg | sed -n '/kjit-suite: step WARN at the original address/,$p' | ./kernel-log-errors.sh \
  | grep -v -e 'WARNING: CPU' -e 'Call Trace:' > warn-errors.txt
if [ -s warn-errors.txt ]; then fail warn_not_bug "$(head -3 warn-errors.txt | tr '\n' ' ')"; else pass warn_not_bug; fi
rmmod kjit_hazard
rmmod kjit || fail final_rmmod
echo SUITE-GUEST-DONE
sync
