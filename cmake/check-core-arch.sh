#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Checks that the portable core asks the instruction set only through
# arch/ (arch/arch.h says why): no file under core/ includes a header of
# arch/x86/ (or any arch/<isa>/); the arch-neutral headers directly under
# arch/ (arch.h, emit.h, instrumentation.h) are its door.  In a git tree:
# files tracked or new, not ignored.
# Usage: cmake/check-core-arch.sh [REPO_ROOT]
set -euo pipefail
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
cd "$root"
include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]arch/[^/"]+/'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  found="$(git grep -n -I -E --untracked "$include_re" -- core/ || true)"
else
  found="$(grep -r -n -I -E "$include_re" core/ || true)"
fi
if [ -n "$found" ]; then
  echo "check-core-arch: core/ includes an ISA's header (ask arch/arch.h instead):" >&2
  printf '%s\n' "$found" | sed 's/^/  /' >&2
  exit 1
fi
echo "check-core-arch: core/ reaches the instruction set only through arch/*.h"
