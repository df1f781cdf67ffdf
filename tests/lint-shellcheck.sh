#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ctest lint.shellcheck: shellcheck at its default severity over every shell
# script in the repository (*.sh, kjit-lab, .ci/run, and any other file
# whose #! line names sh or bash; tracked or new, not ignored); any finding
# fails.  -x follows the
# `# shellcheck source=` of sourced helpers, so paths are from the top.
# Usage: tests/lint-shellcheck.sh [REPO_ROOT]
set -euo pipefail
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
cd "$root"
command -v shellcheck >/dev/null || { echo "lint-shellcheck: shellcheck missing (tools/lab/deps.sh installs it)" >&2; exit 2; }
ls_files() { git ls-files --cached --others --exclude-standard "$@"; }
mapfile -t files < <({
  ls_files '*.sh' kjit-lab .ci/run
  ls_files -z | xargs -0 awk 'FNR == 1 && /^#!.*[\/ ](ba|da)?sh( |$)/ {print FILENAME} {nextfile}'
} | sort -u)
[ "${#files[@]}" -gt 0 ] || { echo "lint-shellcheck: no scripts found under $root" >&2; exit 2; }
if shellcheck -x "${files[@]}"; then
  echo "lint-shellcheck: ${#files[@]} scripts clean"
else
  echo "lint-shellcheck: FAIL (findings above)" >&2
  exit 1
fi
