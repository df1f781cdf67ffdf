#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The by-hand matrix: the whole `./kjit-lab test` RUNS times in a row on
# each kernel line, then once per CPU model on each of the CPU kernels, in
# one clone of HEAD made at the start: a kernel's first run builds its
# tree (build-ABI) from nothing, the runs after it reuse that build, so a
# run costs its tests, not another build (KJIT_MATRIX_FRESH=1: a clean
# clone for every run).  About 50 minutes a run on 2 cores (a first run
# some 10 more); CI runs the smoke of it (guest.kernel_lines,
# guest.cpu_models).
# One line per run is appended to RESULTS (and printed):
#   KERNEL CPU runN-of-RUNS COMMIT rc RC PASSED/TOTAL SECONDS [failed: TESTS]
# and each run's whole output is kept beside it (RESULTS.d/).  A kernel
# line's streak is reported, not stopped, at a failure.
# Resumable: a run RESULTS already shows passing at the same commit is not
# run again, and a clone already at that commit is kept, so after a restart
# the same command (with KJIT_MATRIX_COMMIT for an older commit) goes on
# where it stopped.  Creating RESULTS.stop ends the matrix before its next
# run (to give QEMU back without killing a run).
# Usage: tools/lab/matrix.sh [RESULTS]     (default: ./matrix-results.txt)
# Env: KJIT_MATRIX_KERNELS (default: tools/kernel-version's ABI, then
#      tools/kernel-lines and their flavours: Debian 12's 6.12 cloud, amd64
#      and rt, Debian 13's cloud), KJIT_MATRIX_RUNS (3),
#      KJIT_MATRIX_CPUS ("EPYC-Rome Cascadelake-Server-v4"),
#      KJIT_MATRIX_CPU_KERNELS (the default ABI and the first kernel line),
#      KJIT_MATRIX_DIR (the clone; default /tmp/kjit-matrix),
#      KJIT_MATRIX_FRESH (1: a clean clone per run),
#      KJIT_MATRIX_COMMIT (the commit to test; default HEAD).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
results="$(realpath -m "${1:-matrix-results.txt}")"
mkdir -p "$results.d"
default_abi="$(head -n 1 "$root/tools/kernel-version")"
first_line="$(head -n 1 "$root/tools/kernel-lines")"
kernels="${KJIT_MATRIX_KERNELS:-$default_abi $first_line ${first_line/-cloud-/-} ${first_line/-cloud-/-rt-} ${first_line/+deb12-/+deb13-}}"
runs="${KJIT_MATRIX_RUNS:-3}"
cpus="${KJIT_MATRIX_CPUS:-EPYC-Rome Cascadelake-Server-v4}"
cpu_kernels="${KJIT_MATRIX_CPU_KERNELS:-$default_abi $first_line}"
scratch="${KJIT_MATRIX_DIR:-/tmp/kjit-matrix}"
commit="$(git -C "$root" rev-parse --short "${KJIT_MATRIX_COMMIT:-HEAD}")" || exit 1
[ -n "${KJIT_MATRIX_COMMIT:-}" ] || [ -z "$(git -C "$root" status --porcelain)" ] ||
  echo "matrix: the tree has uncommitted changes; the runs test $commit, without them" >&2

fresh="${KJIT_MATRIX_FRESH:-0}"
clone() {
  rm -rf "$scratch"
  if ! git clone -q "$root" "$scratch" || ! git -C "$scratch" checkout -q "$commit"; then
    echo "matrix: cannot clone $commit into $scratch" >&2; return 1
  fi
}
# the clone of an interrupted matrix is kept when it is at the commit
if [ "$fresh" != 1 ] && [ "$(git -C "$scratch" rev-parse --short HEAD 2>/dev/null)" != "$commit" ]; then
  clone || exit 1
fi

# passed KERNEL CPU LABEL: RESULTS already holds this run passing at commit
passed() {
  [ -f "$results" ] && grep -q "^$1 $2 $3 $commit rc 0 " "$results"
}

# one_run KERNEL CPU LABEL: the whole suite in the clone, one line
one_run() {
  local k="$1" cpu="$2" label="$3" log rc t0 secs summary failed nfail ntotal
  log="$results.d/$k-$cpu-$label.log"
  if passed "$k" "$cpu" "$label"; then
    echo "matrix: $k $cpu $label passed at $commit already" >&2; return 0
  fi
  if [ -e "$results.stop" ]; then
    echo "matrix: $results.stop exists; stopping before $k $cpu $label" >&2; exit 0
  fi
  [ "$fresh" != 1 ] || clone || return 1
  t0=$(date +%s)
  (cd "$scratch" && KJIT_KERNEL="$k" KJIT_GUEST_CPU="$cpu" CI=true ./kjit-lab test < /dev/null) > "$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  summary=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\)/\1 \2/p' "$log" | tail -n 1)
  failed=$(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (.*/\1/p' "$log" | tr '\n' ' ')
  if [ -n "$summary" ]; then
    read -r nfail ntotal <<< "$summary"
    summary="$((ntotal - nfail))/$ntotal"
  else
    summary="no-ctest-summary"
  fi
  echo "$k $cpu $label $commit rc $rc $summary ${secs}s${failed:+ failed: $failed}" | tee -a "$results"
}

for k in $kernels; do
  for i in $(seq 1 "$runs"); do one_run "$k" max "run$i-of-$runs"; done
done
for k in $cpu_kernels; do
  for cpu in $cpus; do one_run "$k" "$cpu" "run1-of-1"; done
done
