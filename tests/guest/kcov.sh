#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit's KCOV device on the stock kernel (tests/guest/kcov-guest.sh, the
# client tests/guest/kcov_client.c): coverage of the kcov.rst example's
# calls, two threads, disable, CMP records, a blocking read, a full buffer,
# the real KCOV's error codes, unload under a client; once per preemption
# mode, each boot with KASLR, which must have moved the kernel (and drawn
# two offsets for two boots): the two boots' PCs of read(-1) are the same
# canonical addresses.  Each boot reports the checks of checks/kcov.list.
# Usage: tests/guest/kcov.sh BUILD_DIR
# Env: KJIT_KCOV_MODES (tools/lab/preempt-modes.sh: "voluntary full", "rt").
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
host_kjit kcov
dbg="$("$root/tools/lab/fetch-debug.sh")"
vmlinux="$dbg/vmlinux-dbg"
link_text=0x$(nm "$vmlinux" | awk '$3 == "_text" {a = $1} END {print a}')
verdict_begin kcov
# kcov_boot MODE: one boot, judged, its checks the ones of checks/kcov.list
kcov_boot() {
  local mode="$1" share="$B/guest-kcov-$1" rc=0 append
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  share_program "$share" kcov_client
  share_program "$share" record_workload
  share_script "$share" "$root/tests/guest/kcov-guest.sh" LINK_TEXT="$link_text"
  append="$("$root/tools/lab/preempt-modes.sh" --append "$mode")"
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --tcg-single --timeout 600 \
    ${append:+--append "$append"} || rc=$?
  VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" KCOV-GUEST-DONE "$mode"
  verdict_expect_checks "$share" "$root/tests/guest/checks/kcov.list" "$mode"
}
# text_of SHARE: the boot's _text (kaslr.txt: "_text link-time-_text")
text_of() { local t _l; if [ -f "$1/kaslr.txt" ] && read -r t _l < "$1/kaslr.txt"; then echo "0x$t"; fi; }
shares=() modes=()
for mode in ${KJIT_KCOV_MODES:-$("$root/tools/lab/preempt-modes.sh")}; do
  kcov_boot "$mode"
  shares+=("$B/guest-kcov-$mode") modes+=("$mode")
done
# KASLR moved the kernel in every boot (the canonical-PC checks below
# prove nothing where _text is the link-time one), and the two boots drew
# different offsets: one that drew the first's again boots once more.
if [ ${#shares[@]} -ge 2 ] && [ -n "$(text_of "${shares[0]}")" ] && [ "$(text_of "${shares[0]}")" = "$(text_of "${shares[1]}")" ]; then
  echo "kcov: both boots drew _text $(text_of "${shares[0]}"); booting ${modes[1]} again"
  kcov_boot "${modes[1]}"
fi
share="${shares[${#shares[@]}-1]}"   # the host's report checks read the last boot's
for s in "${shares[@]}"; do
  t="$(text_of "$s")" label="$(basename "$s")"
  if [ -z "$t" ]; then verdict_bad "kaslr_moved ($label): no kaslr.txt"
  elif [ "$t" = "$link_text" ]; then verdict_bad "kaslr_moved ($label): _text $t is the link-time _text: KASLR did not move the kernel"
  else echo "CHECK kaslr_moved PASS ($label) _text $t, link-time $link_text"; fi
done
if [ ${#shares[@]} -ge 2 ]; then
  if [ "$(text_of "${shares[0]}")" != "$(text_of "${shares[1]}")" ]; then
    echo "CHECK kaslr_two_offsets PASS _text $(text_of "${shares[0]}") and $(text_of "${shares[1]}")"
  else
    verdict_bad "kaslr_two_offsets: both boots at _text $(text_of "${shares[0]}"), twice: the canonical-PC checks across boots prove nothing"
  fi
fi
# Two traces of the same openat of a missing file, no other task running
# (kcov-guest.sh): the path's own code, fs/, is the same both times.  What
# else runs in the task's context depends on the rest of the system, as
# under the real KCOV: preemption points, wake-ups, task work; on
# PREEMPT_RT also migrate_enable's slow path when the task was preempted
# inside a sleeping spinlock's migrate-disabled section (the scheduler's
# enqueue/dequeue, load tracking, rbtree).  So fs/'s PCs are held to 98%
# everywhere, and all PCs to 95% where no sleeping spinlock migrates the
# task (not on rt); the differing PCs are named by their source files.
for i in "${!shares[@]}"; do
  s="${shares[$i]}"
  a="$s/open-miss2.txt" b="$s/open-miss3.txt" label="$(basename "$s")" all_pct=95 need="need 95%"
  [ "${modes[$i]}" != rt ] || all_pct=0 need="not bounded on rt"
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
  if [ "$f" -gt 50 ] && [ $((fb * 100)) -ge $((f * 98)) ] && [ $((nb * 100)) -ge $((n * all_pct)) ]; then
    echo "CHECK open_repeatable PASS ($label) $fb of $f fs/ PCs in both traces; all PCs $nb of $n ($need); the others by file: ${diff:-none}"
  else
    verdict_bad "open_repeatable ($label): $fb of $f fs/ PCs in both traces (need 98%); all PCs $nb of $n ($need); the others by file: ${diff:-none}"
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
