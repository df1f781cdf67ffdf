#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ctest lint.spdx: every tracked source file (C, C++, assembly, headers,
# shell, Python, CMake, Kbuild, Makefiles) names its licence in an SPDX
# line within its first three lines (LICENSE says which and why).
# Usage: tests/check-spdx.sh REPO_ROOT
set -euo pipefail
root="${1:?usage: $0 REPO_ROOT}"
cd "$root"
bad=0 n=0
while IFS= read -r f; do
  case "$f" in
    tests/data/*|bench/results/*) continue ;;
    *.c|*.cc|*.h|*.S|*.sh|*.py|*.cmake|*CMakeLists.txt|*Kbuild|*Makefile|kjit-lab|.ci/run) ;;
    *) continue ;;
  esac
  [ -f "$f" ] || continue
  n=$((n + 1))
  if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0'; then
    echo "check-spdx: $f: no SPDX-License-Identifier line in its first three lines" >&2
    bad=1
  fi
done < <(git ls-files 2>/dev/null || find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||')
[ "$n" -gt 0 ] || { echo "check-spdx: no source file found" >&2; exit 1; }
[ "$bad" = 0 ] && echo "check-spdx: $n source files carry their SPDX line"
exit "$bad"
