# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "hazards": hazards.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
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
$K stats > stats-ftrace-attached.txt
echo function > $T/current_tracer
$K stats > stats-ftrace-before.txt
e0=$(awk '$1=="entries"{print $2}' stats-ftrace-before.txt)
$W getppid 200 > /dev/null
# where the calls went (entries, declines by reason, nested, skipped,
# filtered) and what the cache met (text flushes, generations, reclaims)
$K stats > stats-ftrace-coexists.txt
e1=$(awk '$1=="entries"{print $2}' stats-ftrace-coexists.txt)
keys='^(entries|entry_declined|entry_skipped|filtered|calls_[a-z_]+|left_[a-z_]+|fallbacks|flushes|text_events|text_flushes|generations|reclaims)$'
why="calls: $(stats_grown stats-ftrace-before.txt stats-ftrace-coexists.txt "$keys")enabling: $(stats_grown stats-ftrace-attached.txt stats-ftrace-before.txt "$keys")"
n=$(grep -c "sys_getppid" $T/trace)     # before `nop`: switching tracers clears the buffer
echo nop > $T/current_tracer
echo > $T/set_ftrace_filter
echo > $T/trace
if [ "$n" -ge 200 ] && [ $((e1 - e0)) -ge 200 ]; then
  pass ftrace_function_tracer_coexists "trace=$n kjit_entries=$((e1 - e0)) $why"
else
  fail ftrace_function_tracer_coexists "trace=$n kjit_entries=$((e1 - e0)) $why"
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
# Another text writer keeps text_mutex long after its write returned (the
# kprobe optimizer holds it across an RCU-tasks grace period): the `nop`
# above rewrote getppid's entry, and kjit translates it again at once,
# not once the mutex is free.  Nothing read it since that rewrite.
hazard_loaded || insmod ./kjit_hazard.ko
HZP=/sys/module/kjit_hazard/parameters
echo 5000 > $HZP/hold_text_mutex_ms
i=0; while [ "$(cat $HZP/text_mutex_held)" != Y ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
$K stats > stats-text-mutex-before.txt
e0=$(awk '$1=="entries"{print $2}' stats-text-mutex-before.txt)
$W getppid 200 > /dev/null
held=$(cat $HZP/text_mutex_held)
$K stats > stats-text-mutex.txt
e1=$(awk '$1=="entries"{print $2}' stats-text-mutex.txt)
why="held_throughout=$held $(stats_grown stats-text-mutex-before.txt stats-text-mutex.txt "$keys")"
i=0; while [ "$(cat $HZP/text_mutex_held)" = Y ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
if [ "$held" = Y ] && [ $((e1 - e0)) -ge 200 ]; then
  pass translated_while_text_mutex_held "kjit_entries=$((e1 - e0)) $why"
else
  fail translated_while_text_mutex_held "kjit_entries=$((e1 - e0)) $why"
fi
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
hazard_loaded || insmod ./kjit_hazard.ko
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
