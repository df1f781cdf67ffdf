# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "tiny_cache": tiny cache under load.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
step "tiny cache"
config config_bbcount_tiny bbcount 16
$K attach all-syscalls > /dev/null
# Rounds of two concurrent workloads until at least 5 reclaims happened
# (at most one every 500 ms: reclaim_work.c); every
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
echo "tiny cache: $round rounds, $fl reclaims, $(grep '^calls covered ' stats-tiny.txt)"
chk tiny_cache_flushed [ "${fl:-0}" -ge 5 ]
# A 16 KiB cache is full most of the time, so most calls are declined at
# entry and run natively: 1.8-22.2% of them entered the cache in the runs
# measured (3,000-12,000 calls).  1% is the floor, under the lowest seen:
# below it the cache stays full after its reclaims (a reclaim that frees
# nothing, or one that never ends), and the rounds above compared mostly
# native runs with native.
covered_at_least tiny_cache_calls_covered stats-tiny.txt 1
config config_icount_full_cache icount 0
