# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# A fragment of suite-guest.sh: W, K, ITERS, orig_cmdline and the helpers are
# its, and the loop counters that only count are fine.
# shellcheck disable=SC2034,SC2154,SC2086
# Suite phase "capture_config": config while a capture is armed.
# Sourced by tests/guest/suite-guest.sh (its helpers, W, K, ITERS, native.txt).
# Re-creating the engine would drop the capture's plugin without a word:
# config must refuse (EBUSY; the module logs that the capture was why, not
# the capture's attachment, which alone also gives EBUSY) and the capture
# must still record its getppid.
# The capture is armed when the module says so (attaching and arming take
# a while under TCG); the child's sleep starts only then.
step "config refused while a capture is armed"
armed0=$(dmesg | grep -c 'capture armed for __x64_sys_getppid')
$K capture --syscall getppid --count 1 -o busy.kjitcap -- sh -c 'sleep 3; exec ./workload getppid 3' > capture-busy.txt 2>&1 & cp=$!
w=0
while [ "$(dmesg | grep -c 'capture armed for __x64_sys_getppid')" = "$armed0" ] && [ $w -lt 100 ]; do
  sleep 0.2; w=$((w + 1))
done
if $K config --tool icount > config-busy.txt 2>&1; then cfg_rc=0; else cfg_rc=1; fi
wait "$cp"; cap_rc=$?
if [ $cfg_rc = 1 ] && grep -q 'Device or resource busy' config-busy.txt \
   && dmesg | grep -q 'configure refused: a capture is in progress'; then
  pass config_refused_while_capture_armed "$(cat config-busy.txt)"
else
  fail config_refused_while_capture_armed "rc $cfg_rc: $(tr '\n' ' ' < config-busy.txt)"
fi
if [ $cap_rc = 0 ] && grep -q '1 invocation(s) written' capture-busy.txt; then
  pass capture_survives_config "$(tail -1 capture-busy.txt)"
else
  fail capture_survives_config "rc $cap_rc: $(tr '\n' ' ' < capture-busy.txt)"
fi
config config_after_capture bbcount
