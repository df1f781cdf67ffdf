#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Derive tests/data/kernel-facts-$ABI.txt (key value lines) from the committed
# kallsyms list. Live-only facts (cmdline, vulnerabilities) come from LIVE_FILE
# (key value lines, written by extract-kallsyms.sh) or, when absent, are kept
# from the existing facts file.
# Usage: tools/lab/kernel-facts.sh [KALLSYMS.txt.xz [LIVE_FILE]] > facts.txt
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
LIST="${1:-$repo/tests/data/kallsyms-$ABI.txt.xz}"
LIVE="${2:-}"
OLD="$repo/tests/data/kernel-facts-$ABI.txt"

echo "abi $ABI"
if [ -n "$LIVE" ]; then cat "$LIVE"
elif [ -f "$OLD" ]; then grep -E '^(cmdline|vulnerability\.)' "$OLD" || true
fi
# Layout facts from the debug vmlinux (gdb), for the lab's kernel fixes
# (tools/lab/kernel-fixes.sh): a per-CPU variable's offset, field offsets,
# instructions' offsets in a function.
DBG="${KJIT_BUILD:-$repo/build/lab}/debug/vmlinux-dbg"
if [ -r "$DBG" ]; then
  gdb -batch -nx -ex 'printf "layout.rcu_data 0x%lx\n", (unsigned long)&rcu_data' \
    -ex 'printf "layout.rcu_data.cpu %d\n", (int)&((struct rcu_data *)0)->cpu' \
    -ex 'printf "layout.rcu_data.defer_qs_iw %d\n", (int)&((struct rcu_data *)0)->defer_qs_iw' \
    -ex 'printf "layout.rcu_data.defer_qs_pending %d\n", (int)&((struct rcu_data *)0)->defer_qs_pending' \
    "$DBG" 2>/dev/null | grep '^layout\.'
  # rcu_read_unlock_special's stores of immediates into rcu_data.defer_qs_iw
  # (its re-initialisation), by offset in the function.
  iw=$(gdb -batch -nx -ex 'printf "%d\n", (int)&((struct rcu_data *)0)->defer_qs_iw' "$DBG" 2>/dev/null)
  gdb -batch -nx -ex 'disassemble rcu_read_unlock_special' "$DBG" 2>/dev/null | awk -v iw="$iw" '
    function hex(s,  n, i) { n = 0; s = tolower(substr(s, 3))
      for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return n }
    /<\+[0-9]+>:\tmov[lq]? +\$[-0-9a-fx]+,0x[0-9a-f]+\(%r[a-z0-9]+\)$/ {
      off = $0; sub(/.*<\+/, "", off); sub(/>.*/, "", off)
      d = $NF; sub(/.*,/, "", d); sub(/\(.*/, "", d); d = hex(d)
      if (d >= iw && d < iw + 32) list = list " " off }
    END { if (list != "") print "layout.rcu_read_unlock_special.reinit" list }'
elif [ -f "$OLD" ]; then grep -E '^layout\.' "$OLD" || true
fi
xz -dc "$LIST" | awk '
  BEGIN { want["_text"]; want["_stext"]; want["_etext"]; want["_sinittext"]; want["_einittext"]
          want["__x86_return_thunk"]; want["__fentry__"]; want["__schedule"]; want["schedule"]
          want["x64_sys_call"]; want["kallsyms_lookup_name"]
          want["__indirect_thunk_start"]; want["__indirect_thunk_end"] }
  ($3 in want) || $3 ~ /^__x86_indirect_thunk_/ || $3 ~ /^__x86_indirect_its_thunk_/ ||
  $3 ~ /^__x86_indirect_jump_thunk_/ || $3 ~ /^__x86_indirect_call_thunk_/ {
    if (!($3 in seen)) { seen[$3]; print $3, "0x" $1 } }'
