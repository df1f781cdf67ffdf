# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "sleeps": invocations that sleep are followed to their end.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
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
