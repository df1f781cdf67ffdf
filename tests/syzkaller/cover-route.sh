#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ctest syzkaller.cover_route: the route of README.md "Coverage pages" on
# the pinned kernel's debug vmlinux, on the host, without syzkaller or a
# guest.
#   - kernel-obj.sh: the alias copy (__sanitizer_cov_trace_pc at schedule,
#     the build id kept), and its refusals;
#   - syzkaller's coverage-point scan (cover-points.py): its error on the
#     stock vmlinux, points on the copy;
#   - a /rawcover of do_sys_openat2's block starts (each minus 5, as
#     syz-manager prints kjit's PCs) and one module PC: rawcover-to-kjit.py
#     gives back the block starts and drops the module PC, kjit-report's
#     lcov counts fs/open.c's lines, the function's first line among them,
#     and genhtml renders it;
#   - a line that is no PC stops the conversion with its file and line; a
#     module PC left in stops kjit-report (why the conversion drops them).
# Usage: tests/syzkaller/cover-route.sh KJIT_REPORT [BUILD_DIR]
#   (the debug vmlinux and source: tools/lab/fetch-debug.sh, BUILD_DIR/lab/debug)
# Each check reads the status of the command before it: no `set -e`.
set -uo pipefail
[ $# -ge 1 ] || { sed -n '2,/^set /p' "$0" | sed '$d' >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
report="$1"
B="$(cd "${2:-$root/build}" && pwd)" || exit 2
dbg="$(KJIT_BUILD="$B/lab" "$root/tools/lab/fetch-debug.sh" "$B/lab/debug" | tail -n1)" \
  || { echo "cover-route: FAIL: fetching the debug vmlinux" >&2; exit 1; }
V="$dbg/vmlinux-dbg"
T="$(mktemp -d)" || exit 1     # the copy is as large as the vmlinux (600 MB)
trap 'rm -rf "$T"' EXIT
fails=0
check() {   # NAME CONDITION-STATUS DETAIL
  if [ "$2" = 0 ]; then echo "CHECK $1 PASS ${3:-}"; else echo "CHECK $1 FAIL ${3:-}"; fails=$((fails + 1)); fi
}
sym() { nm "$1" | awk -v s="$2" '$3 == s {print $1}'; }
build_id() { readelf -n "$1" | awk '/Build ID:/ {print $3}'; }

# The copy: the alias at schedule, the same build id (crash symbolization).
"$here/kernel-obj.sh" "$V" "$T/kobj" > "$T/kobj.out" 2>&1; s=$?
alias_at="$(sym "$T/kobj/vmlinux" __sanitizer_cov_trace_pc)"
sched="$(sym "$V" schedule)"
[ "$s" = 0 ] && [ -n "$sched" ] && [ "$alias_at" = "$sched" ]; check kernel_obj.alias $? "symbol at ${alias_at:-none}, schedule at ${sched:-none}"
[ -n "$(build_id "$V")" ] && [ "$(build_id "$V")" = "$(build_id "$T/kobj/vmlinux")" ]; check kernel_obj.build_id $? "$(build_id "$V")"

# Its refusals: a vmlinux that has the symbol already, an object without schedule.
"$here/kernel-obj.sh" "$T/kobj/vmlinux" "$T/again" > "$T/again.out" 2>&1; s=$?
[ "$s" = 1 ] && grep -q 'already has __sanitizer_cov_trace_pc' "$T/again.out" && [ ! -e "$T/again/vmlinux" ]; check kernel_obj.refuses_alias $? "$(cat "$T/again.out")"
echo 'int f(int x) { return x + 1; }' > "$T/f.c"
cc -g -c "$T/f.c" -o "$T/f.o"
"$here/kernel-obj.sh" "$T/f.o" "$T/nosched" > "$T/nosched.out" 2>&1; s=$?
[ "$s" = 1 ] && grep -q 'no function symbol schedule' "$T/nosched.out"; check kernel_obj.refuses_no_schedule $? "$(cat "$T/nosched.out")"

# syzkaller's scan: its error on the stock vmlinux, points on the copy.
python3 "$here/cover-points.py" "$V" > "$T/scan-stock.out" 2>&1; s=$?
[ "$s" = 1 ] && grep -q 'no __sanitizer_cov_trace_pc symbol in the object file' "$T/scan-stock.out"; check scan.stock_refused $? "$(cat "$T/scan-stock.out")"
python3 "$here/cover-points.py" "$T/kobj/vmlinux" > "$T/scan-alias.out" 2>&1; s=$?
points="$(sed -n 's/.*coverage points \([0-9]*\):.*/\1/p' "$T/scan-alias.out")"
[ "$s" = 0 ] && [ "${points:-0}" -gt 0 ]; check scan.alias_points $? "$(cat "$T/scan-alias.out")"

# Block starts of do_sys_openat2 (fs/open.c).
"$here/block-starts.sh" "$V" do_sys_openat2 > "$T/starts"
read -r fstart _ < "$T/starts"
while read -r a; do printf '0x%x\n' $((0x$a - 5)); done < "$T/starts" > "$T/rawcover.txt"
echo 0xffffffffc0123456 >> "$T/rawcover.txt"      # module code: past _end
nstarts="$(wc -l < "$T/starts")"

# /rawcover -> kjit's PCs: the block starts again, the module PC dropped.
python3 "$here/rawcover-to-kjit.py" "$V" "$T/rawcover.txt" > "$T/kjit.pcs" 2> "$T/convert.err"; s=$?
sed 's/^0x//' "$T/kjit.pcs" | sort > "$T/got"
[ "$s" = 0 ] && [ "$nstarts" -gt 3 ] && cmp -s "$T/got" "$T/starts" && grep -q '; dropped 1 of module code' "$T/convert.err"; check convert.block_starts $? "$nstarts block starts; $(cat "$T/convert.err")"

# kjit-report's lcov: fs/open.c counted, the function's first line too.
"$report" --kcov "$T/kjit.pcs" --vmlinux "$V" --format lcov --source-root "$dbg/linux-source" \
  -o "$T/kjit.info" > "$T/report.out" 2>&1; s=$?
entry="$(addr2line -e "$V" "0x$fstart" | sed 's/ .*//')"     # .../fs/open.c:LINE
entry_line="${entry##*:}"
# The DA and FNDA lines of the record of fs/open.c (a file: grep -q on a
# pipe would stop awk with SIGPIPE, a failure under pipefail).
awk '/^SF:/ {f = ($0 ~ /\/fs\/open\.c$/)} f && /^(DA|FNDA):/' "$T/kjit.info" > "$T/open_c.lcov" 2>/dev/null
da_hit="$(awk -F'[:,]' '$1 == "DA" && $3 > 0' "$T/open_c.lcov" | wc -l)"
entry_da="$(grep "^DA:$entry_line," "$T/open_c.lcov")"
[ "$s" = 0 ] && [ "$da_hit" -gt 0 ] && grep -Eq '^FNDA:[1-9][0-9]*,do_sys_openat2$' "$T/open_c.lcov" \
  && [ "${entry_da#*,}" -gt 0 ] 2>/dev/null
check lcov.open_c $? "fs/open.c: $da_hit lines counted, entry line $entry_line: ${entry_da:-absent}"
genhtml -q -o "$T/html" "$T/kjit.info" > "$T/genhtml.out" 2>&1; s=$?
[ "$s" = 0 ] && [ -n "$(find "$T/html" -name 'open.c.gcov.html')" ]; check genhtml $? "$(tail -n 3 "$T/genhtml.out")"

# Malformed input: the line of an error page; a module PC given to kjit-report.
printf '0x%x\nfailed to generate coverage profile: no __sanitizer_cov_trace_pc symbol\n' $((0x$fstart - 5)) > "$T/bad.txt"
python3 "$here/rawcover-to-kjit.py" "$V" "$T/bad.txt" > /dev/null 2> "$T/bad.err"; s=$?
[ "$s" = 1 ] && grep -q "bad.txt:2: not a PC" "$T/bad.err"; check convert.bad_line $? "$(cat "$T/bad.err")"
printf '0x%s\n0xffffffffc0123456\n' "$fstart" > "$T/module.pcs"
"$report" --kcov "$T/module.pcs" --vmlinux "$V" --format lcov -o "$T/module.info" > "$T/module.out" 2>&1; s=$?
[ "$s" != 0 ] && grep -q "not in the vmlinux's text" "$T/module.out"; check report.module_pc_refused $? "$(cat "$T/module.out")"

if [ "$fails" = 0 ]; then echo "syzkaller.cover_route: PASS"; else echo "syzkaller.cover_route: FAIL ($fails checks)"; exit 1; fi
