#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Block starts of one function of a vmlinux, as kjit's KCOV reports them
# (PCs at the vmlinux's addresses): its entry, the targets of its jumps
# inside it, and the instruction after each jump; from objdump, one hex
# address (no 0x) a line, sorted.  Known PCs for the tests of the coverage
# route (cover-route.sh, syz-cover.sh), not all of kjit's blocks: a block
# ends at any control transfer (docs/glossary.md), so blocks also start
# after each call.
# Usage: tests/syzkaller/block-starts.sh VMLINUX FUNCTION
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,/^set /p' "$0" | sed '$d' >&2; exit 2; }
read -r start size < <(nm -S "$1" | awk -v f="$2" '$4 == f {print $1, $2; exit}') \
  || { echo "block-starts: $1: no function $2" >&2; exit 1; }
end="$(printf '%016x' $((0x$start + 0x$size)))"
objdump -d --no-show-raw-insn --start-address="0x$start" --stop-address="0x$end" "$1" \
  | awk -v lo="$start" -v hi="$end" '
      BEGIN { print lo }
      /^ *ffffffff[0-9a-f]+:\t/ { a = $1; sub(/:$/, "", a); if (after) print a; after = 0 }
      /\tj[a-z]+ +ffffffff[0-9a-f]+ </ { t = $(NF - 1); if (t >= lo && t < hi) print t; after = 1 }
    ' | sort -u
