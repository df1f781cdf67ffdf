# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "ipmodify": the IPMODIFY entry path (direct_entry=0).
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
# Where a direct call cannot be used (another direct user owns the function)
# entries go through kjit's IPMODIFY ftrace_ops: the same workload, the same
# results.
step "IPMODIFY entry path"
rmmod kjit || fail rmmod_before_ipmodify
insmod ./kjit.ko direct_entry=0 || fail insmod_ipmodify
config config_ipmodify icount
$K attach all-syscalls > attach-ipmodify.txt 2>&1 || fail attach_all_ipmodify
$W "$ITERS" > wl-ipmodify.txt 2>&1
$W efault > efault-ipmodify.txt 2>&1
$K stats > stats-ipmodify.txt
$K departures --all > departures-ipmodify.txt 2>&1
$K detach all > /dev/null
chk workload_same_ipmodify cmp -s native.txt wl-ipmodify.txt
chk efault_same_ipmodify cmp -s native-efault.txt efault-ipmodify.txt
e=$(awk '$1=="entries"{print $2}' stats-ipmodify.txt)
do_=$(awk '$1=="direct_ops"{print $2}' stats-ipmodify.txt)
fe=$(awk '$1=="fast_entries"{print $2}' stats-ipmodify.txt)
pct=$(sed -n 's/^completion \([0-9.]*\)%.*/\1/p' stats-ipmodify.txt)
if [ "${e:-0}" -gt 200 ] && [ "$do_" = 0 ] && [ "$fe" = 0 ] && awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 99.9) }'; then
  pass ipmodify_entries "entries=$e direct_ops=$do_ fast_entries=$fe; $(grep '^completion ' stats-ipmodify.txt)"
else
  fail ipmodify_entries "entries=$e direct_ops=$do_ fast_entries=$fe; $(grep '^completion ' stats-ipmodify.txt)"
fi
rmmod kjit || fail rmmod_after_ipmodify
insmod ./kjit.ko || fail insmod_after_ipmodify
