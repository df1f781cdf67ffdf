#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ctest lint.guest_verdicts: every host script that boots a guest test
# judges the boot through tests/guest/verdict.sh (status, DONE marker,
# checks, kernel log, taint), not with a verdict of its own.  verdict.sh
# comes sourced directly or through tests/guest/host-preamble.sh.
# Usage: tests/guest/check-verdicts.sh REPO_ROOT
set -euo pipefail
root="${1:?usage: $0 REPO_ROOT}"
bad=0 n=0
for f in "$root"/tests/guest/*.sh; do
  case "$(basename "$f")" in
    *-guest.sh|demo.sh|share.sh|verdict.sh|host-preamble.sh|check-verdicts.sh|guest-lib.sh) continue ;;
  esac
  grep -q 'run-guest\.sh' "$f" || continue
  n=$((n + 1))
  why=""
  # shellcheck disable=SC2016  # the literal text of the source lines
  grep -q -e '^\. "\$root/tests/guest/verdict\.sh"' -e '^\. "\$(dirname "\${BASH_SOURCE\[0\]}")/host-preamble\.sh"' "$f" ||
    why="$why does not source verdict.sh (nor host-preamble.sh);"
  grep -q 'verdict_end' "$f" || why="$why no verdict_end;"
  ! grep -q 'kernel-log-errors\.sh' "$f" || why="$why runs kernel-log-errors.sh itself;"
  ! grep -q 'tainted' "$f" || why="$why reads the taint itself;"
  if [ -n "$why" ]; then echo "check-verdicts: ${f#"$root"/}:$why" >&2; bad=1; fi
done
[ "$n" -gt 0 ] || { echo "check-verdicts: no guest test found under $root/tests/guest" >&2; exit 1; }
[ "$bad" = 0 ] && echo "check-verdicts: $n guest tests judge their boots through verdict.sh"
exit "$bad"
