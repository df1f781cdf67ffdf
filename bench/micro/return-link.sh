#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Measures bench/micro/return_link.c on this machine's CPU and writes
# bench/results/return-link.md (the cost of a return link's two
# flags-preserving forms: why kjit's links take no locked xchg).
# Usage: bench/micro/return-link.sh [OUT]   (default bench/results/return-link.md)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/../results/return-link.md}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/return_link" "$here/return_link.c"
"$tmp/return_link" > "$tmp/r.txt"
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
get() { awk -v k="$1" '$1==k{print $2}' "$tmp/r.txt"; }
l=$(get locked) u=$(get no_lock) b=$(get baseline)
{
  echo "Return link compare, ns per translated return (best of 5 x 50M, bench/micro/return-link.sh), $cpu:"
  echo
  echo "| form | ns | over push+drop |"
  echo "|---|---|---|"
  echo "| push return address + drop (baseline) | $b | 0 |"
  awk -v l="$l" -v u="$u" -v b="$b" 'BEGIN {
    printf "| xchg rcx, [rsp] (locked), 4 instructions | %s | %.2f |\n", l, l - b
    printf "| push rcx; mov rcx, [rsp+8], 6 instructions (kjit) | %s | %.2f |\n", u, u - b }'
} > "$out"
cat "$out"
