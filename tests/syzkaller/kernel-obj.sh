#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A kernel_obj for syz-manager on a stock kernel whose KCOV is kjit's:
# OUT_DIR/vmlinux is a copy of the debug vmlinux with one symbol more,
# __sanitizer_cov_trace_pc, a global function at `schedule`'s address.
#
# Why: syzkaller builds its coverage report generator (the /rawcover and
# /cover pages, focus_areas and cover_filter, syz-cover) from the vmlinux's
# compiler callbacks.  It finds them by scanning .text for `call` (e8 rel32)
# to the address of a symbol named __sanitizer_cov_trace_pc
# (pkg/cover/backend/dwarf.go readCoverPoints, elf.go elfReadSymbols), and
# stops with "no __sanitizer_cov_trace_pc symbol in the object file" or
# "vmlinux doesn't contain coverage callbacks" when there are none.  A stock
# kernel has none: kjit instruments it at run time.  With the alias the scan
# finds the calls to schedule (about 200), the generator builds, and the
# pages that only list PCs work; the pages that map PCs to source lines do
# not (tests/syzkaller/README.md, "Coverage pages").
#
# Everything else is the input's: symbols, DWARF, build id, so crash
# symbolization with kernel_obj is unchanged.  The symbol is added relative
# to .text (objcopy's absolute values are truncated to 63 bits).  OUT_DIR
# should hold nothing but this vmlinux: syzkaller also walks kernel_obj for
# modules' .ko files, and must not see the file change while it runs.
#
# Usage: tests/syzkaller/kernel-obj.sh VMLINUX_DBG OUT_DIR
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,/^set /p' "$0" | sed '$d' >&2; exit 2; }
in="$1" out="$2"
sym=__sanitizer_cov_trace_pc
fail() { echo "kernel-obj: $*" >&2; exit 1; }

[ -f "$in" ] || fail "$in: no such file"
# Whole outputs, then grep: no SIGPIPE under pipefail.
header="$(readelf -hW "$in" 2>/dev/null)" || fail "$in: not an ELF file"
grep -q 'Machine: *Advanced Micro Devices X86-64' <<<"$header" || fail "$in: not an x86-64 ELF file"
sections="$(readelf -SW "$in")"
text="$(awk '$2 == ".text" && $3 == "PROGBITS" {print $4, $6}' <<<"$sections")"
[ -n "$text" ] || text="$(awk '$3 == ".text" && $4 == "PROGBITS" {print $5, $7}' <<<"$sections")"
[ -n "$text" ] || fail "$in: no .text section"
grep -q ' \.debug_info ' <<<"$sections" \
  || fail "$in: no DWARF (.debug_info): give the debug vmlinux (linux-image-ABI-dbg, tools/lab/fetch-debug.sh)"
read -r text_addr text_size <<<"$text"

symbols="$(readelf -sW "$in")"
if awk -v s="$sym" '$8 == s {found = 1} END {exit !found}' <<<"$symbols"; then
  fail "$in already has $sym: a kernel built with KCOV; use its directory as kernel_obj as it is"
fi
sched="$(awk '$8 == "schedule" && $4 == "FUNC" {print $2}' <<<"$symbols")"
[ -n "$sched" ] || fail "$in: no function symbol schedule"
[ "$(wc -l <<<"$sched")" -eq 1 ] || fail "$in: more than one symbol schedule: $(echo "$sched" | tr '\n' ' ')"
# Addresses past 2^63 are negative in bash's arithmetic; their difference is right.
offset=$((0x$sched - 0x$text_addr))
if [ "$offset" -lt 0 ] || [ "$offset" -ge $((0x$text_size)) ]; then fail "$in: schedule (0x$sched) is outside .text"; fi

mkdir -p "$out"
[ ! "$in" -ef "$out/vmlinux" ] || fail "$out/vmlinux is the input itself"
tmp="$out/vmlinux.tmp.$$"
trap 'rm -f "$tmp"' EXIT
objcopy --add-symbol "$sym=.text:$(printf '0x%x' "$offset"),global,function" "$in" "$tmp"
got="$(readelf -sW "$tmp" | awk -v s="$sym" '$8 == s {print $2, $4, $5}')"
[ "$got" = "$sched FUNC GLOBAL" ] || fail "objcopy wrote '$got' for $sym, not '$sched FUNC GLOBAL'"
mv "$tmp" "$out/vmlinux"
echo "kernel-obj: $out/vmlinux: $sym = schedule = 0x$sched"
