#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# syzkaller's own coverage report generator (pkg/cover MakeReportGenerator,
# which syz-manager's coverage pages, cover_filter and tools/syz-cover
# build first) on the pinned kernel's debug vmlinux, through syz-cover:
#   - the stock vmlinux is refused ("no __sanitizer_cov_trace_pc symbol in
#     the object file"), by syz-cover and by /rawcover;
#   - the alias copy of kernel-obj.sh is accepted, with the points
#     cover-points.py finds (the CSV's total of PCs); two of them given as
#     PCs are covered, and the HTML of /cover renders them;
#   - /rawcover (rawcover.go: syzkaller's steps from syz-executor's PCs to
#     the page) prints kjit's PCs of do_sys_openat2's blocks each minus 5,
#     and rawcover-to-kjit.py gives them back;
#   - those PCs match no point: "coverage doesn't match any coverage
#     callbacks", which is why /cover shows nothing of kjit's coverage.
# Outside ctest: CI cannot fetch syzkaller.  See README.md, "Coverage pages".
# Usage: tests/syzkaller/syz-cover.sh SYZKALLER_SRC [BUILD_DIR]
#   Builds SYZKALLER_SRC's tools/syz-cover and rawcover.go (written to
#   SYZKALLER_SRC/tools/kjit-rawcover/: Go builds it offline only inside
#   syzkaller's module) from its vendor directory into
#   BUILD_DIR/syzkaller-cover/ (BUILD_DIR default build), with the
#   copy (kobj/vmlinux) and every output; the debug vmlinux and source from
#   tools/lab/fetch-debug.sh (BUILD_DIR/lab/debug).
set -uo pipefail
[ $# -ge 1 ] || { sed -n '2,/^set /p' "$0" | sed '$d' >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
syz="$(cd "$1" && pwd)" || exit 2
[ -f "$syz/tools/syz-cover/syz-cover.go" ] || { echo "syz-cover: $syz is no syzkaller tree" >&2; exit 2; }
B="$(mkdir -p "${2:-$root/build}" && cd "${2:-$root/build}" && pwd)" || exit 2
dbg="$(KJIT_BUILD="$B/lab" "$root/tools/lab/fetch-debug.sh" "$B/lab/debug" | tail -n1)" \
  || { echo "syz-cover: FAIL: fetching the debug vmlinux" >&2; exit 1; }
V="$dbg/vmlinux-dbg"
out="$B/syzkaller-cover"
mkdir -p "$out/stock"
ln -sfn "$V" "$out/stock/vmlinux"      # syzkaller opens KERNEL_OBJ/vmlinux
fails=0
check() {   # NAME STATUS DETAIL
  if [ "$2" = 0 ]; then echo "CHECK $1 PASS ${3:-}"; else echo "CHECK $1 FAIL ${3:-}"; fails=$((fails + 1)); fi
}

mkdir -p "$syz/tools/kjit-rawcover"
cp "$here/rawcover.go" "$syz/tools/kjit-rawcover/main.go"
for tool in syz-cover kjit-rawcover; do
  (cd "$syz" && GOPROXY=off GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOMAXPROCS=1 \
    nice -n 19 go build -p 1 -o "$out/$tool" "./tools/$tool") \
    || { echo "syz-cover: FAIL: building tools/$tool" >&2; exit 1; }
done
echo "syz-cover: syzkaller $(git -C "$syz" rev-parse --short HEAD 2>/dev/null || echo '(no git)'), $V"
"$here/kernel-obj.sh" "$V" "$out/kobj" || exit 1
cover() {   # KERNEL_OBJ NAME FORMAT PCS_FILE
  GOMAXPROCS=1 nice -n 19 "$out/syz-cover" -os linux -arch amd64 -kernel_obj "$1" \
    -kernel_src "$dbg/linux-source" "-$3" "$out/$2.$3" "$4" > "$out/$2.log" 2>&1
}

python3 "$here/cover-points.py" --list "$out/kobj/vmlinux" > "$out/points.txt"
npoints="$(wc -l < "$out/points.txt")"
head -n 2 "$out/points.txt" > "$out/two-points.txt"
"$here/block-starts.sh" "$V" do_sys_openat2 | sed 's/^/0x/' > "$out/kjit-openat.pcs"

cover "$out/stock" stock csv "$out/two-points.txt"; s=$?
[ "$s" != 0 ] && grep -q 'no __sanitizer_cov_trace_pc symbol in the object file' "$out/stock.log"
check stock_refused $? "$(tail -n 1 "$out/stock.log")"

cover "$out/kobj" points csv "$out/two-points.txt"; s=$?
read -r covered total < <(awk -F, 'NR > 1 {c += $4; t += $5} END {print c + 0, t + 0}' "$out/points.csv" 2>/dev/null)
[ "$s" = 0 ] && [ "${covered:-0}" = 2 ] && [ "${total:-0}" = "$npoints" ]
check alias_accepted $? "covered $covered of $total PCs (cover-points.py: $npoints points) $(tail -n 1 "$out/points.log")"
cover "$out/kobj" points html "$out/two-points.txt"; s=$?
[ "$s" = 0 ] && [ -s "$out/points.html" ]; check alias_html $? "$(tail -n 1 "$out/points.log")"

GOMAXPROCS=1 nice -n 19 "$out/kjit-rawcover" "$out/stock" "$out/kjit-openat.pcs" > /dev/null 2> "$out/rawcover-stock.log"; s=$?
[ "$s" != 0 ] && grep -q 'no __sanitizer_cov_trace_pc symbol in the object file' "$out/rawcover-stock.log"
check rawcover_stock_refused $? "$(tail -n 1 "$out/rawcover-stock.log")"
GOMAXPROCS=1 nice -n 19 "$out/kjit-rawcover" "$out/kobj" "$out/kjit-openat.pcs" > "$out/rawcover-openat.txt" \
  2> "$out/rawcover.log"; s=$?
want="$(while read -r pc; do printf '0x%x\n' $((pc - 5)); done < "$out/kjit-openat.pcs")"
python3 "$here/rawcover-to-kjit.py" "$V" "$out/rawcover-openat.txt" > "$out/back.pcs" 2>> "$out/rawcover.log"
[ "$s" = 0 ] && [ "$(cat "$out/rawcover-openat.txt")" = "$want" ] && cmp -s "$out/back.pcs" "$out/kjit-openat.pcs"
check rawcover_minus_5 $? "$(wc -l < "$out/kjit-openat.pcs") PCs, first $(head -n 1 "$out/kjit-openat.pcs") printed as $(head -n 1 "$out/rawcover-openat.txt"); $(tail -n 1 "$out/rawcover.log")"

cover "$out/kobj" openat csv "$out/rawcover-openat.txt"; s=$?
[ "$s" != 0 ] && grep -q "coverage doesn't match any coverage callbacks" "$out/openat.log"
check kjit_pcs_unmatched $? "$(tail -n 1 "$out/openat.log")"

if [ "$fails" = 0 ]; then echo "syzkaller.syz_cover: PASS"; else echo "syzkaller.syz_cover: FAIL ($fails checks)"; exit 1; fi
