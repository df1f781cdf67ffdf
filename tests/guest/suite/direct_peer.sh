# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "direct_peer": another direct-call user on the function.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
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
