#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Checks that x86 decoding stays in arch/x86 (arch/arch.h says why): no file
# outside arch/x86/ includes <Zydis/...> or <Zycore/...>, except tests/ and
# fuzz/, which use Zydis as an independent oracle for the x86 code (decoding
# what the code writer emitted, generating x86 programs, comparing the
# decoder wrapper with Capstone).  In a git tree: files tracked or new, not
# ignored.
# Usage: cmake/check-arch-includes.sh [REPO_ROOT]
set -euo pipefail
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
cd "$root"
allowed='^(arch/x86|tests|fuzz)/'
include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](Zydis|Zycore)/'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  found="$(git grep -n -I -E --untracked "$include_re" || true)"
else  # an exported tree: every file but build trees and, in the source
  # package, zydis/ (Zydis's own source: the orig-zydis component)
  found="$(grep -r -n -I -E --exclude-dir='build*' --exclude-dir=.git "$include_re" . | sed 's|^\./||' | grep -v '^zydis/' || true)"
fi
bad="$(printf '%s\n' "$found" | grep -v -E "$allowed" | grep -v '^$' || true)"
if [ -n "$bad" ]; then
  echo "check-arch-includes: Zydis included outside arch/x86 (ask arch/arch.h instead):" >&2
  printf '%s\n' "$bad" | sed 's/^/  /' >&2
  exit 1
fi
echo "check-arch-includes: Zydis included only in arch/x86/ ($(printf '%s\n' "$found" | grep -c -E '^arch/x86/' || true) files) and the tests' oracles"
