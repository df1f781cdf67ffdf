#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Exact counts on SMP: two vCPUs run the same system call at once, and the
# built-in counters must lose no increment (tests/guest/exact-smp-guest.sh).
# Usage: tests/guest/exact-smp.sh BUILD_DIR
#   Boots multi-threaded TCG (each vCPU on its own host thread), because
#   round-robin TCG never interleaves one read-modify-write with another
#   vCPU's, so a lost update cannot show there.  Voluntary preemption only:
#   the check is of counter storage, not of the preemption paths.
# Env: KJIT_EXACT_N (100000 calls per CPU), KJIT_EXACT_TOOLS ("icount bbcount
#   bbcount_blocks"), KJIT_EXACT_WINDOWS ("default percpu_kb=16
#   percpu_kb=32+bb_max=1024": one module load each, the static and the
#   dynamic per-CPU window; bbcount's per-block counters are locked adds in
#   the first two and per-CPU in the third, where bb_max counters fit),
#   KJIT_EXACT_KO (the module to test; default BUILD_DIR/module/kjit.ko).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
host_kjit exact-smp "${KJIT_EXACT_KO:-}"

share="$B/guest-exact-smp"
share_new "$share"
share_kjit "$share" "$ko" "$root"
share_program "$share" smp_race
share_script "$share" "$root/tests/guest/exact-smp-guest.sh" \
  N="${KJIT_EXACT_N:-100000}" TOOLS="${KJIT_EXACT_TOOLS:-icount bbcount bbcount_blocks}" \
  WINDOWS="${KJIT_EXACT_WINDOWS:-default percpu_kb=16 percpu_kb=32+bb_max=1024}"
echo "exact-smp: booting (multi-threaded TCG)"
rc=0
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --mem 1024 \
   --timeout 600 || rc=$?
verdict_begin exact-smp
VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" EXACT-GUEST-DONE
grep -q '_two_cpus PASS' "$share/checks.txt" 2>/dev/null || verdict_bad "no two-CPU check passed"
verdict_end; exit $?
