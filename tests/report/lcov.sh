#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit-report's lcov lists whole files, as gcov would: a fake vmlinux built
# here from lib/fake.c (four functions, two entered by the recording) and
# lib/other.c (none entered), with lib/helper.h's static function compiled
# into fake.c.  Checks FN/FNDA/FNF/FNH and DA/LF/LH per file, that a file
# without an entered function is left out, the complete/partial comment
# lines, and the percentages lcov --summary and genhtml compute from it.
# Usage: tests/report/lcov.sh KJIT_REPORT
set -euo pipefail
# shellcheck source=tests/report/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

mkdir -p "$T/src/lib"
cat > "$T/src/lib/helper.h" <<'C'
static int h(int x) {
  return x * 5;
}
C
cat > "$T/src/lib/fake.c" <<'C'
#include "helper.h"
int g;
int one(int x) {
  return x + 1;
}
int two(int x) {
  if (x > 3)
    return h(one(x));
  return x;
}
int three(int x) {
  return x * g;
}
int four(int x) {
  int y = three(x);
  return y - 1;
}
C
cat > "$T/src/lib/other.c" <<'C'
int five(int x) {
  return x - 5;
}
C
# -O0: every line of a function has code of its own, in source order.
for f in fake other; do
  (cd "$T/src" && cc -c -g -O0 -fno-pic -mcmodel=kernel -fno-asynchronous-unwind-tables "lib/$f.c" -o "$f.o")
done
stext=0xffffffff81000000
ld --build-id -Ttext=$stext -e one --defsym=_stext=$stext "$T/src/fake.o" "$T/src/other.o" -o "$T/vmlinux"
sym() { nm -S "$T/vmlinux" | awk -v s="$1" '$4 == s {print "0x" $1, "0x" $2}'; }
# The first address of a line of lib/fake.c (the -O0 line table has one row per line).
line_addr() {
  readelf --debug-dump=decodedline "$T/vmlinux" | awk -v l="$1" '$1 == "fake.c" && $2 == l {print $3; exit}'
}
hex() { printf '0x%x' "$1"; }
read -r one one_size <<< "$(sym one)"; read -r two two_size <<< "$(sym two)"
l8="$(line_addr 8)"; l9="$(line_addr 9)"
if [ -z "$one" ] || [ -z "$two" ] || [ -z "$l8" ] || [ -z "$l9" ]; then fail "test object: no symbols or lines"; fi
# one: run 3 times whole; two: run twice, but not its line 8 (x > 3 never held).
python3 "$here/write-data.py" "$T/k.data" \
  --symbol one "$one" "$one_size" --symbol two "$two" "$two_size" \
  --block "$one" "$((one_size))" 4 3 \
  --block "$two" "$((l8 - two))" 4 2 \
  --block "$l9" "$((two + two_size - l9))" 2 2
"$report" -i "$T/k.data" --vmlinux "$T/vmlinux" -f lcov -o "$T/k.info" 2> "$T/err" || { cat "$T/err"; fail "lcov"; }

# One file's record, sorted, without SF/end_of_record.
record() { awk -v f="SF:$1" '$0 == f {on = 1; next} on && /^end_of_record/ {exit} on' "$T/k.info" | sort; }
want_fake="$(sort <<'W'
FN:3,one
FN:6,two
FN:11,three
FN:14,four
FNDA:3,one
FNDA:2,two
FNDA:0,three
FNDA:0,four
FNF:4
FNH:2
DA:3,3
DA:4,3
DA:5,3
DA:6,2
DA:7,2
DA:8,0
DA:9,2
DA:10,2
DA:11,0
DA:12,0
DA:13,0
DA:14,0
DA:15,0
DA:16,0
DA:17,0
LF:15
LH:7
W
)"
[ "$(record lib/fake.c)" = "$want_fake" ] || { diff <(echo "$want_fake") <(record lib/fake.c); cat "$T/k.info"; fail "lib/fake.c's record"; }
echo "ok lib/fake.c: 4 functions, 2 entered; 15 lines, 7 run"
want_helper="$(sort <<'W'
FN:1,h
FNDA:0,h
FNF:1
FNH:0
DA:1,0
DA:2,0
DA:3,0
LF:3
LH:0
W
)"
[ "$(record lib/helper.h)" = "$want_helper" ] || { cat "$T/k.info"; fail "lib/helper.h's record"; }
echo "ok lib/helper.h: its function compiled into fake.c, not run"
! grep -q 'other\.c\|five' "$T/k.info" || fail "lib/other.c has no entered function but is listed"
echo "ok lib/other.c (nothing entered) left out"
grep -qx '# complete: lib/fake.c' "$T/k.info" || { head -5 "$T/k.info"; fail "complete files"; }
grep -qx '# partial: lib/helper.h' "$T/k.info" || { head -5 "$T/k.info"; fail "partial files"; }
echo "ok header comments: fake.c complete, helper.h partial"

# What lcov and genhtml make of it (the tracefile's comments are no error).
lcov --summary "$T/k.info" > "$T/summary" 2>&1 || { cat "$T/summary"; fail "lcov --summary"; }
grep -q 'lines\.*: 38\.9% (7 of 18 lines)' "$T/summary" || { cat "$T/summary"; fail "lcov --summary lines"; }
grep -q 'functions\.*: 40\.0% (2 of 5 functions)' "$T/summary" || { cat "$T/summary"; fail "lcov --summary functions"; }
echo "ok lcov --summary: lines 7 of 18, functions 2 of 5"
"$report" -i "$T/k.data" --vmlinux "$T/vmlinux" -f lcov --source-root "$T/src" -o "$T/abs.info"
genhtml -q -o "$T/html" "$T/abs.info" > "$T/genhtml" 2>&1 || { cat "$T/genhtml"; fail "genhtml"; }
page="$T/html/lib/fake.c.gcov.html"
[ -f "$page" ] || fail "genhtml wrote no page for lib/fake.c"
# The page's header table: lines hit, total, %, then functions hit, total, %.
cells="$(grep -o 'headerCovTableEntry[A-Za-z]*">[^<]*' "$page" | sed 's/.*">//' | tr '\n' ' ')"
[ "$cells" = "7 15 46.7 % 2 4 50.0 % " ] || fail "genhtml's lib/fake.c page says: $cells"
echo "ok genhtml: lib/fake.c lines 7 of 15 (46.7%), functions 2 of 4 (50.0%)"
echo "PASS report.lcov"
