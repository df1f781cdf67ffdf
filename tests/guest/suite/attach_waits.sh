# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "attach_waits": an attach waits while config quiesces the cache.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
# config checks that nothing is attached, then waits until no task can be in
# the cache (here: one asleep in a fault taken there), then re-creates the
# engine.  An attach made meanwhile must wait for it, and land on the new
# engine: it would otherwise send entries into the engine being replaced.
step "attach waits while config quiesces the cache"
try=0; in_cache=0
$K attach newuname > /dev/null
while [ $try -lt 5 ] && [ $in_cache = 0 ]; do
  rm -f uffd-blocked uffd-release
  ./uffd_fault . > uffd-cfg.txt 2>&1 & up=$!
  n=0; while [ ! -f uffd-blocked ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
  cat /proc/$up/task/*/stack > uffd-cfg-stack.txt 2>/dev/null
  grep -q kjit-code-cache uffd-cfg-stack.txt && in_cache=1
  [ $in_cache = 1 ] || { touch uffd-release; wait "$up"; }
  try=$((try + 1))
done
$K detach all > /dev/null
rm -f cfg-rc att-rc
( $K config --tool bbcount > cfg-out.txt 2>&1; echo $? > cfg-rc ) & cp=$!
sleep 2
( $K attach getppid > att-out.txt 2>&1; echo $? > att-rc ) & ap=$!
sleep 3
if [ $in_cache = 1 ] && [ ! -f cfg-rc ] && [ ! -f att-rc ]; then
  pass attach_waits_for_config
else
  fail attach_waits_for_config "in_cache=$in_cache config_rc=$(cat cfg-rc 2>/dev/null) attach_rc=$(cat att-rc 2>/dev/null)"
fi
touch uffd-release
wait "$up"; wait "$cp"; wait "$ap"
chk uffd_result_after_config grep -q "uffd ok" uffd-cfg.txt
$W getppid 10 > /dev/null
$K blocks > cfg-att-blocks.txt 2>&1
$K detach all > /dev/null
if [ "$(cat cfg-rc 2>/dev/null)" = 0 ] && [ "$(cat att-rc 2>/dev/null)" = 0 ] &&
   [ "$(stat_of tool)" = bbcount ] && grep -q ' __x64_sys_getppid+' cfg-att-blocks.txt; then
  pass attach_after_config_on_new_engine
else
  fail attach_after_config_on_new_engine "config_rc=$(cat cfg-rc 2>/dev/null) attach_rc=$(cat att-rc 2>/dev/null) tool=$(stat_of tool): $(tr '\n' ' ' < cfg-out.txt) $(tr '\n' ' ' < att-out.txt)"
fi
config config_icount_after_attach_wait icount
