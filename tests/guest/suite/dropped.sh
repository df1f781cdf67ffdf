# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "dropped": full tables and rings are reported, not silent.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
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
