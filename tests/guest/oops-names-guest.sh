#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/oops-names.sh:
# a WARN and an oops in translated code (kjit_hazard's WARN_ON_ONCE and
# NULL store) must name the original function, the oops also its frames, in
# the kernel log.  The WARN taints W, the oops kills the writer and taints
# D: the log and the taint the host judges are taken before both
# (log_snapshot), and nothing of kjit_hazard is touched after the oops (the
# dead writer held its parameter lock).
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
insmod ./kjit.ko || { fail insmod; guest_done OOPS-GUEST-DONE; exit 1; }
insmod ./kjit_hazard.ko || fail insmod_hazard
note_modules
chk attach_hazard_entry "$K" attach kjit_hazard_entry
e0=$(stat_of entries)
echo ra > /sys/module/kjit_hazard/parameters/cmd
e1=$(stat_of entries)
chk entered_before_oops [ "$e1" -gt "$e0" ]
log_snapshot
# a WARN inside the attached function: its ud2 runs at the original address.
# Every level to the console from here, as on a fuzzing VM (the lab boots
# quiet, which keeps a WARN's splat off it; an oops raises it by itself).
echo 8 > /proc/sys/kernel/printk
echo "<2>kjit-crash: step warn in translated code" > /dev/kmsg
echo warn > /sys/module/kjit_hazard/parameters/cmd
chk warn_names_original sh -c "dmesg | grep -q 'WARNING: CPU: .* kjit_hazard_entry+0x'"
echo "<2>kjit-crash: step oops in translated code" > /dev/kmsg
sh -c 'echo oops > /sys/module/kjit_hazard/parameters/cmd'
echo "the writer's status: $?"
dmesg | sed -n '/kjit-crash: step oops/,$p' > oops.txt
if grep -q 'kjit: RIP: 0010:kjit_hazard_entry+0x.* translated at ' oops.txt; then
  pass oops_names_original "$(grep 'kjit: RIP' oops.txt)"
else
  fail oops_names_original "$(grep -E 'RIP|kjit:' oops.txt | head -n 4 | tr '\n' ' ')"
fi
# the original's frames, unwound from the original instruction: the
# faulting function, then its caller in kjit_hazard (the parameter store)
sed -n '/kjit: the same frames in the original code:/,/kjit: \|CR2:/p' oops.txt > frames.txt
if grep -q '^\[[ 0-9.]*\]  kjit_hazard_entry+0x' frames.txt &&
   grep -q '^\[[ 0-9.]*\]  cmd_set+0x.*\[kjit_hazard\]' frames.txt; then
  pass oops_original_frames "$(grep -c '\]  [a-z_]' frames.txt) frames"
else
  fail oops_original_frames "$(head -n 4 frames.txt | tr '\n' ' ')"
fi
# the report kjit adds to is the kernel's own, for a fault in the cache
chk oops_rip_in_cache grep -q 'RIP: 0010:kjit-code-cache+0x' oops.txt
# and the rest of the system goes on
chk stats_after_oops "$K" stats
guest_done OOPS-GUEST-DONE
