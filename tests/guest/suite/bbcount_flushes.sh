# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "bbcount_flushes": bbcount: one counter per original block across flushes.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
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
