#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit's KCOV device on the stock kernel (tests/guest/kcov-guest.sh, the
# client tests/guest/kcov_client.c): coverage of the kcov.rst example's
# calls, two threads, disable, CMP records, a blocking read, a full buffer,
# the real KCOV's error codes, unload under a client; once per preemption
# mode, each boot with KASLR: the two boots' PCs of read(-1) are the same
# canonical addresses.
# Usage: tests/guest/kcov.sh BUILD_DIR
# Env: KJIT_KCOV_MODES (tools/lab/preempt-modes.sh: "voluntary full", "rt").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
ko="$B/module/kjit.ko"
[ -f "$ko" ] || { echo "kcov: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
# shellcheck source=tests/guest/share.sh
. "$root/tests/guest/share.sh"
# shellcheck source=tests/guest/verdict.sh
. "$root/tests/guest/verdict.sh"
share_guest_bin "$B"
dbg="$(KJIT_BUILD="$B/lab" "$root/tools/lab/fetch-debug.sh")"
vmlinux="$dbg/vmlinux-dbg"
link_text=0x$(nm "$vmlinux" | awk '$3 == "_text" {a = $1} END {print a}')
verdict_begin kcov
shares=()
for mode in ${KJIT_KCOV_MODES:-$(KJIT_BUILD="${KJIT_BUILD:-$B/lab}" "$root/tools/lab/preempt-modes.sh")}; do
  share="$B/guest-kcov-$mode"
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  share_program "$share" kcov_client
  share_program "$share" record_workload
  share_script "$share" "$root/tests/guest/kcov-guest.sh" LINK_TEXT="$link_text"
  shares+=("$share")
  rc=0
  append="$(KJIT_BUILD="${KJIT_BUILD:-$B/lab}" "$root/tools/lab/preempt-modes.sh" --append "$mode")"
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --tcg-single --timeout 600 \
    ${append:+--append "$append"} || rc=$?
  VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" KCOV-GUEST-DONE "$mode"
done
# Two traces of the same openat of a missing file, no other task running
# (kcov-guest.sh): the path's own code, fs/, is the same both times.  What
# else runs in the task's context depends on the rest of the system, as
# under the real KCOV: preemption points, wake-ups, task work; on
# PREEMPT_RT also migrate_enable's slow path when the task was preempted
# inside a sleeping spinlock's migrate-disabled section (the scheduler's
# enqueue/dequeue, load tracking, rbtree).  The check is the same on every
# flavour; the differing PCs are named by their source files.
for s in "${shares[@]}"; do
  a="$s/open-miss2.txt" b="$s/open-miss3.txt" label="$(basename "$s")"
  if [ ! -s "$a" ] || [ ! -s "$b" ]; then verdict_bad "open_repeatable ($label): no traces"; continue; fi
  sort -u <(awk '{print $1}' "$a") <(awk '{print $1}' "$b") > "$s/open-pcs.txt"
  addr2line -e "$vmlinux" < "$s/open-pcs.txt" |
    sed 's/:.*//; s|^debian/build/build_[^/]*/||; s|^debian/build/source[^/]*/||' > "$s/open-files.txt"
  paste "$s/open-pcs.txt" "$s/open-files.txt" > "$s/open-pcs-files.txt"
  awk 'FILENAME == ARGV[1] { x[$1] = 1; next } FILENAME == ARGV[2] { y[$1] = 1; next }
       { both = ($1 in x) && ($1 in y); fs = ($2 ~ /^fs\//); n++; nb += both; if (fs) { f++; fb += both }
         if (!both) d[$2]++ }
       END { printf "%d %d %d %d", n, nb, f, fb; for (k in d) printf " %s:%d", k, d[k]; print "" }' \
    <(awk '{print $1}' "$a") <(awk '{print $1}' "$b") "$s/open-pcs-files.txt" > "$s/open-repeat.txt"
  read -r n nb f fb diff < "$s/open-repeat.txt"
  if [ "$f" -gt 50 ] && [ $((fb * 100)) -ge $((f * 98)) ]; then
    echo "CHECK open_repeatable PASS ($label) $fb of $f fs/ PCs in both traces; all PCs $nb of $n; the others by file: ${diff:-none}"
  else
    verdict_bad "open_repeatable ($label): $fb of $f fs/ PCs in both traces (need 98%); all PCs $nb of $n; the others by file: ${diff:-none}"
  fi
done
# Canonical PCs: the same call gives the same PCs in two KASLR boots, and
# they are the vmlinux's addresses (ksys_read's PCs lie inside the
# vmlinux's ksys_read).
if [ ${#shares[@]} -ge 2 ]; then
  a="${shares[0]}" b="${shares[1]}"
  read -r text_a _ < "$a/kaslr.txt"; read -r text_b _ < "$b/kaslr.txt"
  if [ -s "$a/read2.txt" ] && cmp -s <(awk '{print $1}' "$a/read2.txt" | sort -u) <(awk '{print $1}' "$b/read2.txt" | sort -u); then
    echo "CHECK canonical_pcs_two_boots PASS $(wc -l < "$a/read2.txt") PCs of read(-1) identical; _text 0x$text_a and 0x$text_b"
  else
    verdict_bad "canonical_pcs_two_boots: read(-1)'s PCs differ between boots (_text 0x$text_a, 0x$text_b)"
  fi
  [ "$text_a" != "$text_b" ] || echo "NOTE both boots drew the same KASLR offset: the comparison above shows canonical PCs only within it"
else
  echo "NOTE one boot (one preemption model): canonical PCs are checked against the vmlinux only, not across two boots"
fi
# Recordings are canonical too: the same workload's blocks in two boots.
blocks() { "$B/guest-bin/kjitctl" report -i "$1/badfd.data" --format json |
           python3 -c 'import json, sys; print("\n".join(sorted(b["addr"] for b in json.load(sys.stdin)["blocks"])))'; }
if [ ${#shares[@]} -ge 2 ]; then
  blocks_a="$(blocks "${shares[0]}")" || true
  blocks_b="$(blocks "${shares[1]}")" || true
  if [ -n "$blocks_a" ] && [ "$blocks_a" = "$blocks_b" ] && grep -qi '^0xffffffff8' <<< "$blocks_a"; then
    echo "CHECK canonical_blocks_two_boots PASS $(wc -l <<< "$blocks_a") blocks of read(-1), identical link-time addresses"
  else
    verdict_bad "canonical_blocks_two_boots: the recordings' blocks differ (or none): $(wc -l <<< "$blocks_a") and $(wc -l <<< "$blocks_b")"
  fi
  # and their lcov files merge line by line (lcov -a): the same lines, twice the counts
  for s in "${shares[0]}" "${shares[1]}"; do
    "$B/guest-bin/kjitctl" report -i "$s/badfd.data" --vmlinux "$vmlinux" --format lcov -o "$s/badfd.info" 2> "$s/badfd-lcov.err" || true
  done
  lines() { grep '^DA:' "$1" | cut -d, -f1 | sort -u; }
  if lcov -q -a "${shares[0]}/badfd.info" -a "${shares[1]}/badfd.info" -o "$share/merged.info" > "$share/lcov-merge.log" 2>&1 &&
     [ -n "$(lines "$share/merged.info")" ] && [ "$(lines "$share/merged.info")" = "$(lines "${shares[0]}/badfd.info")" ]; then
    echo "CHECK canonical_lcov_merge PASS $(lines "$share/merged.info" | wc -l) lines of the two boots merge into the same lines"
  else
    verdict_bad "canonical_lcov_merge: lcov -a of the two boots' recordings: $(tail -2 "$share/lcov-merge.log" "${shares[0]}/badfd-lcov.err" 2>/dev/null | tr '\n' ' ')"
  fi
fi
ksys_read=$(nm "$vmlinux" | awk '$3 == "ksys_read" {a = $1} END {print a}')
pc=$(awk '$2 ~ /^ksys_read\+/ {print $1; exit}' "$share/read2.txt")
if [ -n "$pc" ] && [ $((pc)) -ge $((0x$ksys_read)) ] && [ $((pc)) -lt $((0x$ksys_read + 0x200)) ]; then
  echo "CHECK canonical_pcs_vmlinux PASS ksys_read's PC $pc, vmlinux ksys_read 0x$ksys_read"
else
  verdict_bad "canonical_pcs_vmlinux: ksys_read's PC ${pc:-none} is not in the vmlinux's ksys_read (0x$ksys_read)"
fi
# The same PCs in kjitctl report: a trace becomes blocks (text, drcov).
cmake --build "$B" --target kjit-report > /dev/null
pcs="$share/open-hit.pcs" R="$share/report"
mkdir -p "$R"
if "$B/guest-bin/kjitctl" report --kcov "$pcs" --vmlinux "$dbg/vmlinux-dbg" > "$R/text.txt" 2> "$R/text.err" \
   && grep -q ' do_sys_openat2$' "$R/text.txt"; then
  echo "CHECK report_kcov_text PASS"
else
  verdict_bad "report_kcov_text: $(cat "$R/text.err")"
fi
distinct=$(grep '^0x' "$pcs" | awk '{print $1}' | sort -u | wc -l)
"$B/guest-bin/kjitctl" report --kcov "$pcs" --vmlinux "$dbg/vmlinux-dbg" --format drcov -o "$R/kcov.drcov"
blocks=$(sed -n 's/^BB Table: \([0-9]*\) bbs$/\1/p' "$R/kcov.drcov")
if [ "${blocks:-0}" = "$distinct" ]; then
  echo "CHECK report_kcov_drcov PASS $blocks blocks"
else
  verdict_bad "report_kcov_drcov: drcov ${blocks:-?} blocks, $distinct distinct PCs"
fi
verdict_end; exit $?
