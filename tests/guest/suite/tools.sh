# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "tools": every tool, every system call.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
for tool in icount bbcount calltrace branch_hints lock_contention entry_count callstack; do
  step "tool $tool, all system calls"
  config "config_$tool" "$tool"
  $K attach all-syscalls > "attach-$tool.txt" 2>&1 || fail "attach_all_$tool"
  tail -n1 "attach-$tool.txt"
  e0=$(stat_of entries)
  $W "$ITERS" > "wl-$tool.txt" 2>&1
  $W efault > "efault-$tool.txt" 2>&1
  $K stats > "stats-$tool.txt"
  $K departures > "departures-$tool.txt" 2>&1
  $K show > "report-$tool.txt" 2>&1
  $K show --json > "report-$tool.json" 2>&1
  $K detach all > /dev/null
  chk "workload_same_$tool" cmp -s native.txt "wl-$tool.txt"
  chk "efault_same_$tool" cmp -s native-efault.txt "efault-$tool.txt"
  # entries count from insmod: this tool's are what its two workload runs
  # added (about 320 attached calls), whatever phases ran before
  e=$(awk '$1=="entries"{print $2}' "stats-$tool.txt")
  if [ $((${e:-0} - e0)) -gt 200 ]; then pass "entered_$tool" "$((e - e0)) entries"
  else fail "entered_$tool" "$((${e:-0} - e0)) entries (want more than 200)"; fi
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
# Every call of the attached functions is in one count: the calls that
# entered the cache are the entries the engine counted (one window, the
# same reset).  With the default cache nothing fills it: 99.9% or more of
# the calls entered (100% in every run measured; a declined or skipped
# call of the ~400 fails it).
if awk '$1=="entered"{e=$2} $1=="calls_entered"{c=$2} END{exit !(e > 0 && c == e)}' stats-icount.txt; then
  covered_at_least calls_covered_all_syscalls stats-icount.txt 99.9
else
  fail calls_covered_all_syscalls "$(grep -E '^(entered|calls_entered) ' stats-icount.txt | tr '\n' ' ') $(grep '^calls covered ' stats-icount.txt)"
fi
# the text report starts with the calls and completion lines, the JSON one
# carries them
chk report_text_calls_first sh -c "head -n1 report-icount.txt | grep -q '^calls covered [0-9.]*% ([1-9]'"
chk report_text_completion grep -q '^completion [0-9.]*% ([1-9]' report-icount.txt
chk report_json_completion grep -q '"completion": {"entered": [1-9]' report-icount.json
chk report_json_calls grep -q '"calls": {"entered": [1-9]' report-icount.json
chk report_json_schema grep -q '^{"schema_version": 3, "document": "show", "tool": "icount"' report-icount.json
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
