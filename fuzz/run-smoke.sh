#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs every kjit libFuzzer target over its committed seed corpus for
# SECONDS seconds each and prints the executions per target.  Fails if a
# target is missing or any run crashes / reports a sanitizer error.
#
#   fuzz/run-smoke.sh BUILD_DIR SECONDS
#
# BUILD_DIR is a clang build configured with -DKJIT_FUZZ=ON (targets in
# BUILD_DIR/fuzz/).  New inputs go to a scratch directory, never into
# fuzz/corpus/; the seed is fixed (KJIT_FUZZ_SEED, default 1) so that CI runs
# are repeatable; crash reproducers are left in BUILD_DIR/fuzz/smoke-artifacts/.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$1
seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
targets="fuzz_decoder_vs_capstone fuzz_block_builder fuzz_differential fuzz_capture_loader fuzz_replay fuzz_data_file"
artifacts=$build/fuzz/smoke-artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT INT TERM

status=0
summary=""
for t in $targets; do
  bin=$build/fuzz/$t
  if [ ! -x "$bin" ]; then
    echo "run-smoke: $bin missing (configure with CC=clang CXX=clang++ -DKJIT_FUZZ=ON and build)" >&2
    status=1
    summary="$summary
$t: MISSING"
    continue
  fi
  mkdir -p "$scratch/$t"
  log=$scratch/$t.log
  echo "== $t: ${seconds}s over fuzz/corpus/$t"
  "$bin" -max_total_time="$seconds" -print_final_stats=1 -timeout=30 -seed="${KJIT_FUZZ_SEED:-1}" \
      -artifact_prefix="$artifacts/$t-" "$scratch/$t" "$here/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  [ -n "$execs" ] || execs="?"
  if [ $rc -ne 0 ]; then
    status=1
    echo "run-smoke: $t FAILED (exit $rc); last lines of its log:" >&2
    tail -n 40 "$log" >&2
    summary="$summary
$t: FAILED after $execs executions (artifacts in $artifacts)"
  else
    summary="$summary
$t: ok, $execs executions"
  fi
done
echo "== summary ($seconds s per target)$summary"
exit $status
