# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "cost": entry/exit cost (tool none, one boot).
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
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
