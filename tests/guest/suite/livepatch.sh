# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "livepatch": livepatch on an attached function.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
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
