#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# syzkaller's syz-execprog and syz-executor on kjit's KCOV in the lab guest
# (the pinned cloud kernel, booted with KASLR): the programs in progs/ with
# coverage (-cover=1 -coverfile) and with comparisons (-cover=1 -hints), one
# at a time and then two procs repeating them all. PASS needs: syzkaller
# refusing to run without kjit, coverage for every call of every program,
# comparisons for every program, PCs that are the vmlinux's link-time
# addresses (not shifted by the boot's KASLR offset: inside the vmlinux's
# text, and openat's, pipe write's and TCP connect's inside the functions
# nm names), the repeated runs finishing, and a clean kernel log
# (tests/guest/verdict.sh).
#
#   tests/syzkaller/execprog.sh SYZ_BUILD [KJIT_BUILD]
# SYZ_BUILD: a tree built by tests/syzkaller/build-syzkaller.sh (its
# bin/linux_amd64/syz-execprog and syz-executor). KJIT_BUILD (default
# ./build): a build directory with module/kjit.ko and guest-bin/kjitctl;
# its lab/ cache (or KJIT_BUILD_LAB) holds the kernel and the debug vmlinux.
# Results: KJIT_BUILD/syzkaller-execprog/ (checks.txt, cov/, hints/, logs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
syz="$(cd "${1:?usage: execprog.sh SYZ_BUILD [KJIT_BUILD]}" && pwd)"
B="$(cd "${2:-$root/build}" && pwd)"
lab="${KJIT_BUILD_LAB:-$B/lab}"
bin="$syz/bin/linux_amd64"
for f in "$bin/syz-execprog" "$bin/syz-executor" "$B/module/kjit.ko" "$B/guest-bin/kjitctl"; do
  [ -f "$f" ] || { echo "execprog: $f missing" >&2; exit 2; }
done
# shellcheck source=tests/guest/verdict.sh
. "$root/tests/guest/verdict.sh"
vmlinux="$(KJIT_BUILD="$lab" "$root/tools/lab/fetch-debug.sh")/vmlinux-dbg"
link_text=0x$(nm "$vmlinux" | awk '$3 == "_text" {print $1}')

share="${KJIT_SYZ_OUT:-$B/syzkaller-execprog}"
rm -rf "$share"; mkdir -p "$share/progs"
cp "$B/module/kjit.ko" "$B/guest-bin/kjitctl" "$bin/syz-execprog" "$bin/syz-executor" \
   "$root/tests/guest/guest-lib.sh" "$root/tools/lab/kernel-log-errors.sh" "$share/"
cp "$root"/tests/syzkaller/progs/*.txt "$share/progs/"
{ echo '#!/bin/sh'; echo "LINK_TEXT='$link_text'"; sed 1d "$root/tests/syzkaller/execprog-guest.sh"; } > "$share/run.sh"

verdict_begin syzkaller.execprog
rc=0
KJIT_BUILD="$lab" "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" \
  --smp 2 --mem 2048 --timeout 1200 || rc=$?
VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" EXECPROG-GUEST-DONE

# Every call of every program has coverage; every program has comparisons.
for p in "$root"/tests/syzkaller/progs/*.txt; do
  n="$(basename "$p" .txt)" calls="$share/cov/$n.calls"
  want=$(grep -c . "$p")
  got=$(awk '$3 > 0' "$calls" 2>/dev/null | wc -l)
  if [ "$got" = "$want" ]; then
    echo "CHECK per_call_cover_$n PASS $want calls, PCs per call: $(awk '{printf "%s ", $3}' "$calls")"
  else
    verdict_bad "per_call_cover_$n: $got of $want calls have coverage ($(tr '\n' ';' < "$calls" 2>/dev/null))"
  fi
  comps=$(grep -o 'ncomps=[0-9]*' "$share/hints/$n.log" 2>/dev/null | tail -1 | cut -d= -f2)
  if [ "${comps:-0}" -gt 0 ]; then
    echo "CHECK hints_$n PASS $(grep -o 'ncomps=[0-9]* ncandidates=[0-9]*' "$share/hints/$n.log" | tail -1)"
  else
    verdict_bad "hints_$n: no comparisons ($(tail -2 "$share/hints/$n.log" 2>/dev/null | tr '\n' ' '))"
  fi
done

# Canonical PCs: every PC syzkaller received lies in the vmlinux's text at
# its link-time address, inside a function nm knows. With KASLR the
# run-time addresses are shifted by a multiple of 2 MiB: a PC that was not
# canonicalised falls outside the text or into another function.
nm -n "$vmlinux" | awk '$2 ~ /^[tTwW]$/ {print $1, $3}' > "$share/text-syms.txt"
read -r stext etext < <(nm "$vmlinux" | awk '$3 == "_stext" {s = $1} $3 == "_etext" {e = $1} END {print s, e}')
find "$share/cov" -name '*.[0-9]*' -type f | sort > "$share/cov-files.txt"
# FILE PC FUNCTION for every PC (sorted merge of PCs into the symbol list;
# kernel addresses are 16 hex digits, so they compare as strings)
while read -r f; do sed "s|^|$(basename "$f") |" "$f"; done < "$share/cov-files.txt" |
  awk '{pc = tolower($2); sub(/^0x/, "", pc); print pc, $1}' | LC_ALL=C sort > "$share/pcs.txt"
awk -v s="$stext" -v e="$etext" '
  FNR == NR { a[NR] = $1; n[NR] = $2; N = NR; next }
  { while (i < N && a[i + 1] <= $1) i++
    inside = ($1 >= s && $1 < e)
    print $2, $1, (inside && i > 0 ? n[i] : "?") }' "$share/text-syms.txt" "$share/pcs.txt" > "$share/pc-funcs.txt"
total=$(wc -l < "$share/pc-funcs.txt")
outside=$(awk '$3 == "?"' "$share/pc-funcs.txt" | wc -l)
read -r text_run _ < "$share/kaslr.txt" 2>/dev/null || text_run='?'
if [ "$total" -gt 1000 ] && [ "$outside" -eq 0 ]; then
  echo "CHECK pcs_in_vmlinux PASS $total PCs ($(awk '{print $2}' "$share/pc-funcs.txt" | sort -u | wc -l) distinct) in the vmlinux's text; this boot's _text 0x$text_run, link-time $link_text"
else
  verdict_bad "pcs_in_vmlinux: $outside of $total PCs outside the vmlinux's text (this boot's _text 0x$text_run, link-time $link_text): $(awk '$3 == "?" {print $2}' "$share/pc-funcs.txt" | head -5 | tr '\n' ' ')"
fi
[ "0x$text_run" != "$link_text" ] || echo "NOTE this boot drew KASLR offset 0: the PCs would be link-time ones even without canonicalisation"
# FILE FUNCTION: the call's coverage must contain the function
expect_func() {
  if awk -v f="$1" -v g="$2" '$1 == f && $3 == g {found = 1} END {exit !found}' "$share/pc-funcs.txt"; then
    echo "CHECK canonical_$2 PASS $1 has PCs in $2 ($(awk -v f="$1" -v g="$2" '$1 == f && $3 == g' "$share/pc-funcs.txt" | wc -l))"
  else
    verdict_bad "canonical_$2: $1 has no PC in the vmlinux's $2"
  fi
}
expect_func open-read.0 do_sys_openat2
expect_func open-read.4 do_sys_openat2
expect_func pipe.1 pipe_write
expect_func tcp-loopback.4 tcp_v4_connect
expect_func epoll-eventfd.2 do_epoll_ctl

for m in cover hints; do
  if [ "$(cat "$share/stress-$m.rc" 2>/dev/null)" = 0 ]; then
    echo "CHECK stress_$m PASS syz-execprog -procs=2 -repeat=10 finished"
  else
    verdict_bad "stress_$m: syz-execprog status $(cat "$share/stress-$m.rc" 2>/dev/null): $(tail -3 "$share/stress-$m.log" 2>/dev/null | tr '\n' ' ')"
  fi
done
verdict_end; exit $?
