# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "openat": checkable counts on openat.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
step "openat call trace and block counts"
config config_callstack_openat callstack
$K attach openat > /dev/null
cat /proc/version > /dev/null; $W 1 > /dev/null 2>&1
$K show --folded > openat.folded
$K detach all > /dev/null
for f in do_sys_openat2 getname do_filp_open; do
  chk "openat_stack_has_$f" grep -q "^__x64_sys_openat;.*$f" openat.folded
done
config config_bbcount_openat bbcount
$K attach openat > /dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do cat /proc/version > /dev/null; done
$K stats > stats-bb-openat.txt
$K blocks > blocks-openat.txt
$K blocks --json > blocks-openat.json
$K detach all > /dev/null
# the entry block of __x64_sys_openat (+0x5 after the fentry NOP, +0x9
# after ENDBR and the NOP on IBT kernels) runs once per call
first=$(awk '$3 ~ /^__x64_sys_openat\+0x[59]$/ {print $2}' blocks-openat.txt)
chk openat_entry_block_counted [ "${first:-0}" -ge 10 ]
nb=$(grep -c '^0x' blocks-openat.txt)
bb=$(awk '$1=="blocks_built"{print $2}' stats-bb-openat.txt)
fb=$(awk '$1=="fallbacks"{print $2}' stats-bb-openat.txt)
# a block start can be instrumented (and listed) by a build that is then
# abandoned or retried (extable mirror, cache switch), so the listed starts
# are bounded by the instructions translated, not by the blocks built
it=$(awk '$1=="insns_translated"{print $2}' stats-bb-openat.txt)
if [ "$nb" -gt 5 ] && [ "$nb" -le "${it:-0}" ]; then
  pass blocks_listed_le_translated "listed=$nb built=$bb fallbacks=$fb insns=$it"
else
  fail blocks_listed_le_translated "listed=$nb built=$bb fallbacks=$fb insns=$it"
fi
