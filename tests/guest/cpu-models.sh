#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit on the kernel as real CPUs patch it.  QEMU's `max` CPU is affected by
# no speculation bug, so the lab's kernel keeps `ret` where a real CPU gets
# a mitigation thunk; a QEMU model of a real CPU (EPYC-Rome: retbleed's
# untrained-return thunk and SRSO's safe RET; Cascadelake-Server-v4: ITS's
# aligned branch and return thunks, PTI) makes the kernel patch its returns
# and indirect branches as on that hardware.  For each model (KJIT_CPU_MODELS),
# on the default kernel:
#   - the smoke run with every system call attached under block counting
#     (results and EFAULT cases as native, rmmod under load, a clean log);
#   - the guest suite in one boot, every phase but the two long stress
#     loops (KJIT_SUITE_QUICK; KJIT_MODELS_PHASES to choose);
# and both boots must show the kernel really chose a return thunk other than
# __x86_return_thunk (kjit's load line: "returns through X"), or the run
# tested nothing the lab does not test already.
# Usage: tests/guest/cpu-models.sh BUILD_DIR
# Env: KJIT_CPU_MODELS (default EPYC-Rome; the by-hand matrix:
#   "EPYC-Rome Cascadelake-Server-v4"), KJIT_MODELS_PHASES, KJIT_MODELS_SUITE=0
#   (the smoke run only).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
# shellcheck source=tests/guest/suite-boot.sh
. "$root/tests/guest/suite-boot.sh"
models="${KJIT_CPU_MODELS:-EPYC-Rome}"
phases="${KJIT_MODELS_PHASES:-all}"

# returns_thunk SHARE: the thunk kjit found returns patched to, from its
# load line (the console, or the guest's dmesg.txt where the boot is quiet)
returns_thunk() {
  cat "$1/console.log" "$1/dmesg.txt" 2>/dev/null |
    sed -n 's/.*kjit: kernel: .*returns through \([A-Za-z0-9_.]*\).*/\1/p' | head -n1
}
mitigated() {
  local what=$1 share=$2 thunk
  thunk="$(returns_thunk "$share")"
  grep 'kjit-init: vulnerability ' "$share/console.log" | tr -d '\r' | grep -v 'vulnerability [a-z_0-9]*: Not affected$' |
    sed "s/^kjit-init: /cpu-models: $model: $what: /"
  if [ -z "$thunk" ]; then echo "cpu-models: FAIL: $model: $what: no 'kjit: kernel:' line in the guest's log" >&2; return 1; fi
  if [ "$thunk" = __x86_return_thunk ]; then
    echo "cpu-models: FAIL: $model: $what: returns go through __x86_return_thunk: the kernel chose no mitigation thunk on this model" >&2; return 1
  fi
  echo "cpu-models: $model: $what: returns through $thunk"
}

fail=0
for model in $models; do
  d="$B/cpu-models/$model"
  mkdir -p "$d"
  if KJIT_GUEST_CPU="$model" KJIT_SMOKE_ALL=1 KJIT_SMOKE_SHARE="$d/smoke" \
       "$root/tests/guest/smoke.sh" "$B" > "$d/smoke.log" 2>&1 && mitigated smoke "$d/smoke"; then
    grep -E '^smoke: all system calls' "$d/smoke.log" | sed "s/^smoke:/cpu-models: $model:/"
  else
    echo "cpu-models: FAIL: $model: smoke run" >&2; tail -n 30 "$d/smoke.log" >&2; fail=1
  fi
  [ "${KJIT_MODELS_SUITE:-1}" = 1 ] || continue
  mode="$("$root/tools/lab/preempt-modes.sh" --first)"
  if suite_boot cpu-models "$model" "$d/suite.log" env KJIT_GUEST_CPU="$model" KJIT_SUITE_MODES="$mode" \
       KJIT_SUITE_PHASES="$phases" KJIT_SUITE_QUICK=1 KJIT_SUITE_SHARE_PREFIX="cpu-$model-" \
       "$root/tests/guest/run-suite.sh" "$B" &&
     mitigated suite "$B/guest-suite-cpu-$model-$mode"; then
    echo "cpu-models: $model: PASS"
  else
    fail=1
  fi
done
exit "$fail"
