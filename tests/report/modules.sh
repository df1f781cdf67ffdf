#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit-report on module code, without a guest: a tiny relocatable object
# with DWARF, built here by the compiler, stands in for a module's debug
# .ko; write-data.py writes a recording whose MODULES section places that
# module at a run-time base.  Checks the canonical names (module:function
# +off), file:line from the .ko, drcov's module table, lcov and annotate of
# module sources, the ways the .ko is found (--debug-dir, KJIT_DEBUG_DIR,
# the build-id tree) and refused (another build id), and that a malformed
# MODULES section is an error.
# Usage: tests/report/modules.sh KJIT_REPORT
set -euo pipefail
# shellcheck source=tests/report/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The module's source, in a tree as the kernel's (paths relative to it).
mkdir -p "$T/src/drivers/fakemod" "$T/debug/kernel/drivers/fakemod"
cat > "$T/src/drivers/fakemod/fakemod.c" <<'C'
int fakemod_g;
int fakemod_helper(int x) {
  return x * 3 + fakemod_g;
}
int fakemod_read(int x) {
  int y = fakemod_helper(x);
  if (y > 10)
    y -= 2;
  return y;
}
C
(cd "$T/src" && cc -c -g -O0 drivers/fakemod/fakemod.c -o fakemod.o)
ld -r --build-id "$T/src/fakemod.o" -o "$T/debug/kernel/drivers/fakemod/fakemod.ko"
ko="$T/debug/kernel/drivers/fakemod/fakemod.ko"
bid="$(readelf -n "$ko" | awk '/Build ID/ {print $3}')"
[ -n "$bid" ] || fail "no build id in the test object"
size_of() { nm -S "$ko" | awk -v s="$1" '$4 == s {print "0x" $2}'; }
read_size="$(size_of fakemod_read)"; helper_size="$(size_of fakemod_helper)"

# Run-time layout (not the .ko's: the report maps through the symbols).
add() { printf '0x%x' $(($1 + $2)); }   # 64-bit wrap-around prints as unsigned hex
base=0xffffffffc0a00000
helper="$(add $base 0x100)"; readf="$(add $base 0x180)"
stext=0xffffffff81000000
data() {   # data OUT [extra args]
  local out="$1"; shift
  python3 "$here/write-data.py" "$out" \
    --symbol vfs_read "$(add $stext 0x1000)" 0x80 \
    --symbol fakemod_helper "$helper" "$helper_size" \
    --symbol fakemod_read "$readf" "$read_size" \
    --block "$(add $stext 0x1010)" 6 2 3 \
    --block "$helper" 4 2 7 \
    --block "$readf" 4 2 5 "$@"
}
data "$T/k.data" --modules-line "fakemod $base 4096 $bid" --modules-line "other 0xffffffffc0b00000 8192 -"

# text: canonical names and file:line from the .ko
"$report" -i "$T/k.data" --debug-dir "$T/debug" > "$T/text" 2> "$T/err" || { cat "$T/err"; fail "text"; }
grep -Eq 'fakemod:fakemod_read/0x4 +drivers/fakemod/fakemod\.c:5$' "$T/text" || { cat "$T/text"; fail "text: fakemod_read's block"; }
grep -Eq 'fakemod:fakemod_helper/0x4 +drivers/fakemod/fakemod\.c:2$' "$T/text" || { cat "$T/text"; fail "text: fakemod_helper's block"; }
grep -Eq ' vfs_read\+0x10/0x6 *$' "$T/text" || { cat "$T/text"; fail "text: the kernel's block"; }
grep -Eq '%  +1  fakemod:fakemod_read$' "$T/text" || { cat "$T/text"; fail "text: the function table"; }
echo "ok text: module:function+off with file:line"

# json
"$report" -i "$T/k.data" --debug-dir "$T/debug" -f json > "$T/json"
python3 - "$T/json" "$ko" <<'PY' || fail "json"
import json, sys
j = json.load(open(sys.argv[1]))
by = {b["function"]: b for b in j["blocks"]}
r = by["fakemod:fakemod_read"]
assert r["module"] == "fakemod" and r["module_offset"] == 0x180 and "stext_offset" not in r, r
assert r["file"] == "drivers/fakemod/fakemod.c" and r["line"] == 5, r
k = by["vfs_read"]
assert k["stext_offset"] == 0x1010 and "module" not in k, k
mods = {m["name"]: m for m in j["modules"]}
assert mods["fakemod"]["debug_file"] == sys.argv[2], mods
assert "debug_file" not in mods["other"], mods
assert "drivers/fakemod/fakemod.c" in j["lines"], j["lines"].keys()
ann = {a["function"]: a for a in j["annotate"]}
assert ann["fakemod:fakemod_read"]["insns"], ann
PY
echo "ok json: module, module_offset, file, line, modules, lines, annotate"

# drcov: a module table entry for the module that ran code, offsets from its base
"$report" -i "$T/k.data" --debug-dir "$T/debug" -f drcov > "$T/drcov"
python3 - "$T/drcov" "$base" <<'PY' || fail "drcov"
import struct, sys
d = open(sys.argv[1], "rb").read()
head, bbs = d.split(b"BB Table: ", 1)
text = head.decode()
assert "Module Table: version 2, count 2" in text, text
assert " 0, 0xffffffff81000000, 0xffffffff81001016," in text and text.rstrip().endswith("fakemod.ko"), text
assert " 1, %s, 0x%x," % (sys.argv[2], int(sys.argv[2], 16) + 4096) in text, text
n, rest = bbs.split(b" bbs\n", 1)
ent = sorted(struct.unpack_from("<IHH", rest, 8 * i) for i in range(int(n)))
assert ent == [(0x100, 4, 1), (0x180, 4, 1), (0x1010, 6, 0)], ent
assert len(rest) == 8 * int(n), len(rest)
PY
echo "ok drcov: vmlinux and fakemod.ko, module-relative offsets"

# lcov: the module's source file with its lines
"$report" -i "$T/k.data" --debug-dir "$T/debug" -f lcov > "$T/lcov"
grep -qx 'SF:drivers/fakemod/fakemod.c' "$T/lcov" || { cat "$T/lcov"; fail "lcov: no SF of the module"; }
for want in FN:5,fakemod_read FNDA:5,fakemod_read DA:5,5 DA:2,7 DA:8,0; do
  grep -qx "$want" "$T/lcov" || { cat "$T/lcov"; fail "lcov: no $want"; }
done
echo "ok lcov: module source lines, run and not run"

# annotate by canonical glob
"$report" -i "$T/k.data" --debug-dir "$T/debug" -f annotate 'fakemod:*' > "$T/ann" 2> "$T/err"
grep -q '^fakemod:fakemod_read (' "$T/ann" || { cat "$T/ann" "$T/err"; fail "annotate: no fakemod_read"; }
grep -q 'drivers/fakemod/fakemod.c:5' "$T/ann" || { cat "$T/ann"; fail "annotate: no line"; }
grep -q '^total 24 instructions executed in 2 functions' "$T/ann" || { cat "$T/ann"; fail "annotate total"; }
echo "ok annotate: module functions with lines"

# found through KJIT_DEBUG_DIR, and through the build-id tree
KJIT_DEBUG_DIR="$T/nothing:$T/debug" "$report" -i "$T/k.data" | grep 'fakemod\.c:5$' >/dev/null || fail "KJIT_DEBUG_DIR"
mkdir -p "$T/byid/.build-id/${bid:0:2}"
cp "$ko" "$T/byid/.build-id/${bid:0:2}/${bid:2}.debug"
"$report" -i "$T/k.data" --debug-dir "$T/byid" | grep 'fakemod\.c:5$' >/dev/null || fail "build-id tree"
echo "ok found by KJIT_DEBUG_DIR and by the build-id tree"

# another build id: refused (no lines), unless --no-build-id-check
data "$T/other.data" --modules-line "fakemod $base 4096 00112233445566778899"
"$report" -i "$T/other.data" --debug-dir "$T/debug" > "$T/text" 2> "$T/err"
grep -q 'is not the recorded module fakemod' "$T/err" || { cat "$T/err"; fail "build id mismatch not said"; }
! grep -q 'fakemod\.c:' "$T/text" || fail "lines from a .ko of another build"
grep -q 'fakemod:fakemod_read/0x4' "$T/text" || fail "names without debug info"
"$report" -i "$T/other.data" --debug-dir "$T/debug" --no-build-id-check | grep 'fakemod\.c:5$' >/dev/null \
  || fail "--no-build-id-check"
echo "ok another build id refused, --no-build-id-check uses it"

# a recording without MODULES names module code by symbol only
data "$T/old.data" --no-modules
"$report" -i "$T/old.data" --debug-dir "$T/debug" | grep -Eq ' fakemod_read/0x4 *$' || fail "no MODULES section"
echo "ok without MODULES: plain names"

# malformed MODULES: an error, not a guess
for bad in "fakemod $base 0 -" "fakemod $base 4096 xyz" "fake/mod $base 4096 -" "fakemod $base"; do
  data "$T/bad.data" --modules-line "$bad"
  if "$report" -i "$T/bad.data" > /dev/null 2> "$T/err"; then fail "accepted MODULES line '$bad'"; fi
  grep -q 'MODULES: malformed' "$T/err" || { cat "$T/err"; fail "message for '$bad'"; }
done
data "$T/bad.data" --modules-line "a 0xffffffffc0000000 8192 -" --modules-line "b 0xffffffffc0001000 4096 -"
if "$report" -i "$T/bad.data" > /dev/null 2> "$T/err"; then fail "accepted overlapping modules"; fi
grep -q 'overlap' "$T/err" || fail "overlap message"
echo "ok malformed MODULES refused"
echo "PASS report.modules"
