# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "plugins": plugin modules (icount and branch hints).
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
step "plugin modules"
config config_none_plugins none
insmod ./kjit_icount.ko || fail insmod_icount_module
$K attach clone > /dev/null
$W forks 20 > forks.txt
c=$(cat /sys/module/kjit_icount/parameters/count)
$K detach all > /dev/null
rmmod kjit_icount || fail rmmod_icount_module
chk plugin_icount_module_clone [ "${c:-0}" -gt 1000 ]
echo "icount module, clone instructions (20 forks): $c" > plugin-modules.txt
insmod ./kjit_branch_hints.ko || fail insmod_branch_hints
$K attach openat > /dev/null
for i in 1 2 3 4 5; do cat /proc/version > /dev/null; done
r=$(cat /sys/module/kjit_branch_hints/parameters/result)
$K detach all > /dev/null
rmmod kjit_branch_hints || fail rmmod_branch_hints
# shellcheck disable=SC2086  # the module's result is a list of counts, split on purpose
set -- $r
if [ "${1:-0}" -gt 10 ] && [ $(($3 + $4)) -eq "${1:-0}" ]; then pass plugin_branch_hints_openat; else fail plugin_branch_hints_openat "$r"; fi
echo "branch_hints module on openat: $r" >> plugin-modules.txt
