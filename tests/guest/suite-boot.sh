# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the tests that run tests/guest/run-suite.sh for one kernel or
# CPU model (kernel-lines.sh, cpu-models.sh).

# suite_boot WHO LABEL LOG CMD...: runs CMD (a run-suite.sh invocation,
# through env for its settings) into LOG; prints the suite's summary as
# "WHO: LABEL: ..." lines, or its last lines after a FAIL line; 0 or 1.
suite_boot() {
  local who=$1 label=$2 log=$3
  shift 3
  if "$@" > "$log" 2>&1; then
    grep -E '^run-suite: ' "$log" | grep -v '^run-suite: PASS$' | sed "s/^run-suite:/$who: $label:/"
    return 0
  fi
  echo "$who: FAIL: $label: the suite" >&2; tail -n 40 "$log" >&2
  return 1
}
