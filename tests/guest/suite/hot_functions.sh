# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "hot_functions": hot kernel functions with many callers.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
# Every caller's return address becomes a stop address (about 200 here);
# more than 64 shows they are not capped at a small fixed table, past which
# entries from further call sites would run natively.  Allocator and mutex
# functions also run in softirq and under locks.
step "allocator and mutex functions: many call sites"
config config_icount_hot icount
# The allocators by the names of the running kernel: 6.10 renamed them
# (kmem_cache_alloc_noprof, __kmalloc_noprof, __kmalloc_cache_noprof for
# kmalloc_trace).  Every name kept must attach; fewer than five is a failure.
hot=""
for f in kfree kmem_cache_free kmem_cache_alloc kmem_cache_alloc_noprof __kmalloc __kmalloc_noprof \
         kmalloc_trace __kmalloc_cache_noprof mutex_lock mutex_unlock; do
  grep -q " T $f\$" /proc/kallsyms && hot="$hot $f"
done
[ "$(echo $hot | wc -w)" -ge 5 ] || fail attach_hot_functions "only$hot in /proc/kallsyms"
$K attach $hot > attach-hot.txt 2>&1 \
  || fail attach_hot_functions "$(tr '\n' ' ' < attach-hot.txt)"
$W "$ITERS" > wl-hot.txt 2>&1
$W efault > efault-hot.txt 2>&1
$K stats > stats-hot.txt
$K detach all > /dev/null
chk workload_same_hot_functions cmp -s native.txt wl-hot.txt
chk efault_same_hot_functions cmp -s native-efault.txt efault-hot.txt
sa=$(awk '$1=="stop_addresses"{print $2}' stats-hot.txt)
e=$(awk '$1=="entries"{print $2}' stats-hot.txt)
if [ "${sa:-0}" -gt 64 ] && [ "${e:-0}" -gt 1000 ]; then
  pass hot_functions_many_call_sites "stop_addresses=$sa entries=$e"
else
  fail hot_functions_many_call_sites "stop_addresses=$sa entries=$e"
fi
