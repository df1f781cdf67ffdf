# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "sleeps": invocations that sleep are followed to their end.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
# Each call sleeps (woken by a child process, a timer or a resolved fault)
# and its waker records the sleeper's kernel stack (blocking's
# BLOCKING_STACKS): every return site on it above the system call
# dispatcher is code that runs only after the wake-up, wherever the
# compiler inlined what.  With bbcount on the system call, the blocks that
# start there must have counts, and so must the block that starts at the
# return from __schedule into schedule (SCHED_RET, computed on the host
# from vmlinux; the unwinder leaves scheduler functions out of the stack).
step "blocking calls followed through their sleeps"
config config_bbcount_blocking bbcount
for m in read:read poll:poll nanosleep:nanosleep,clock_nanosleep futex:futex wait4:wait4 write:write mutex:read; do
  mode=${m%%:*} sc=${m#*:}
  # shellcheck disable=SC2046  # one argument per system call
  $K attach $(echo "$sc" | tr "," " ") > /dev/null
  $K reset > /dev/null
  rm -f "stacks-$mode.txt"
  BLOCKING_STACKS="stacks-$mode.txt" ./blocking "$mode" 3 > "blocking-$mode.txt" 2>&1
  $K stats > "stats-blocking-$mode.txt"
  $K blocks > "blocks-blocking-$mode.txt"
  $K detach all > /dev/null
  chk "blocking_${mode}_ran" grep -q "^$mode ok" "blocking-$mode.txt"
  # The frames of each recorded stack above do_syscall_64 (x64_sys_call
  # where the kernel dispatches through it), as kjitctl names blocks; a
  # stack that never reaches the dispatcher was not read asleep: "broken".
  fns=$(awk '/^--$/ {if (!done) print "broken"; done = 0; next}
             done {next}
             {f = $2; sub(/\/0x[0-9a-f]*$/, "", f)
              if (f ~ /^(do_syscall_64|x64_sys_call)[+]/) {done = 1; next}
              print f}' "stacks-$mode.txt" 2>/dev/null | sort -u | tr '\n' ' ')
  missing=""
  for f in $fns ${SCHED_RET:-schedule+0x?}; do
    n=$(awk -v f="$f" '$3 == f {s += $2} END{print s + 0}' "blocks-blocking-$mode.txt")
    [ "$n" -gt 0 ] || missing="$missing $f"
  done
  res=$(awk '$1=="sleeps_resumed"{print $2}' "stats-blocking-$mode.txt")
  if [ -n "$fns" ] && [ -z "$missing" ] && [ "${res:-0}" -gt 0 ]; then
    pass "followed_$mode" "after the wake-up: $fns${SCHED_RET}; sleeps_resumed=$res; $(grep '^completion' "stats-blocking-$mode.txt")"
  else
    fail "followed_$mode" "no count after the wake-up for:$missing (stacks: ${fns:-none recorded}); sleeps_resumed=${res:-?}"
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
