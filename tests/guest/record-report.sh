#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The host half of tests/guest/record.sh: `kjitctl report` on the data files
# the guest recorded (SHARE), with the pinned kernel's debug vmlinux.
# Usage: tests/guest/record-report.sh BUILD_DIR SHARE
# Writes SHARE/report/ (lcov tracefile, genhtml pages, the screenshot
# coverage-fs-open.c.png kept as the test's artifact) and prints CHECK lines.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "$1" && pwd)"
S="$(cd "$2" && pwd)"
R="$S/report"
rm -rf "$R"; mkdir -p "$R"
K="$B/guest-bin/kjitctl"
dbg="$("$root/tools/lab/fetch-debug.sh")" || { echo "CHECK fetch_debug FAIL"; exit 1; }
V="$dbg/vmlinux-dbg" SRC="$dbg/linux-source"
fail=0
pass() { echo "CHECK $1 PASS ${2:-}"; }
bad() { echo "CHECK $1 FAIL ${2:-}"; fail=1; }

# --- lcov, lcov --summary, genhtml, Chromium ---------------------------------
if "$K" report -i "$S/cov.data" --vmlinux "$V" --format lcov --source-root "$SRC" -o "$R/cov.info" 2> "$R/lcov.err"; then
  pass report_lcov
else
  bad report_lcov "$(cat "$R/lcov.err")"
fi
if lcov --summary "$R/cov.info" > "$R/summary.txt" 2>&1 && grep -q 'lines\.*: [0-9.]*% ([1-9]' "$R/summary.txt"; then
  pass lcov_summary "$(grep 'lines\.' "$R/summary.txt")"
else
  bad lcov_summary "$(cat "$R/summary.txt")"
fi
# DA lines of FUNC in FILE: from the line of its definition in the source
# to the line of the next top-level closing brace (FUNC may be inlined into
# its caller, so the tracefile's FN lines do not delimit it).
da_of() {
  local file="$1" fn="$2" lo hi
  lo=$(grep -n "^[a-z].*[ *]$fn(" "$SRC/$file" | head -1 | cut -d: -f1)
  [ -n "$lo" ] || return 0
  hi=$(awk -v lo="$lo" 'NR > lo && /^}/ {print NR; exit}' "$SRC/$file")
  awk -v file="$file" -v lo="$lo" -v hi="$hi" '
    /^SF:/ { in_file = ($0 ~ ("/" file "$")); next }
    in_file && /^DA:/ { split(substr($0, 4), d, ","); if (d[1] >= lo && d[1] <= hi) print d[1], d[2] }' "$R/cov.info"
}
for fl in "fs/open.c do_sys_openat2" "fs/read_write.c ksys_read"; do
  read -r file fn <<< "$fl"
  da_of "$file" "$fn" > "$R/da-$fn.txt"
  hit=$(awk '$2 > 0' "$R/da-$fn.txt" | wc -l); miss=$(awk '$2 == 0' "$R/da-$fn.txt" | wc -l)
  if [ "$hit" -gt 0 ]; then pass "lcov_executed_$fn" "$hit lines run, $miss not"; else bad "lcov_executed_$fn" "no line of $fn in $file ran"; fi
done
miss=$(awk '/^SF:.*\/fs\/open.c$/{f=1} f && /^DA:.*,0$/{n++} /^end_of_record/{f=0} END{print n+0}' "$R/cov.info")
if [ "$miss" -gt 0 ]; then pass lcov_unexecuted_lines "$miss lines of fs/open.c did not run"; else bad lcov_unexecuted_lines; fi
if genhtml -q -o "$R/html" "$R/cov.info" > "$R/genhtml.txt" 2>&1 && [ -f "$R/html/fs/open.c.gcov.html" ]; then
  pass genhtml
else
  bad genhtml "$(tail -3 "$R/genhtml.txt")"
fi
page="$R/html/fs/open.c.gcov.html"
line=$(awk '$2 > 0 {print $1; exit}' "$R/da-do_sys_openat2.txt")
if [ -f "$page" ] && [ -n "$line" ]; then
  chrome=(chromium --headless --no-sandbox --disable-gpu --user-data-dir="$R/chromium")
  timeout 120 "${chrome[@]}" --dump-dom "file://$page" > "$R/open.c.dom" 2> "$R/chromium.err"
  # The DOM the browser built: line LINE of do_sys_openat2 shows its count.
  if grep -Eq "<span class=\"lineNum\"> *$line </span><span class=\"lineCov\"> *[1-9][0-9]* :" "$R/open.c.dom" \
     && grep -q 'class="lineNoCov"' "$R/open.c.dom"; then
    pass chromium_dom_counts "fs/open.c line $line shown with its count; unexecuted lines shown"
  else
    bad chromium_dom_counts "$(head -c 300 "$R/chromium.err")"
  fi
  # The page's head (genhtml's summary: lines and functions hit of fs/open.c's
  # totals).  Headless chromium paints nothing when asked to scroll to an
  # anchor, so the shot is of the top, and a blank one fails: its pixel rows
  # decompress to a handful of byte values, a page of text to many.
  timeout 120 "${chrome[@]}" --window-size=1200,1400 --screenshot="$R/coverage-fs-open.c.png" \
    "file://$page" > /dev/null 2>&1
  if shot=$(python3 - "$R/coverage-fs-open.c.png" 2>&1 <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    if kind == b'IDAT':
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
distinct = len(set(zlib.decompress(idat)))
assert distinct >= 32, 'blank: %d distinct byte values' % distinct
print('%d distinct byte values' % distinct)
PY
  ); then pass screenshot "$R/coverage-fs-open.c.png: $shot"; else bad screenshot "$R/coverage-fs-open.c.png: ${shot:-unreadable}"; fi
else
  bad chromium_dom_counts "no page or no executed line"
fi

# --- drcov, read back against the text report ---------------------------------
"$K" report -i "$S/cov.data" --format drcov -o "$R/cov.drcov" 2> "$R/drcov.err" || bad report_drcov "$(cat "$R/drcov.err")"
"$K" report -i "$S/cov.data" > "$R/cov.txt" 2>&1 || bad report_text
if python3 - "$R/cov.drcov" "$R/cov.txt" <<'PY'
import re, struct, sys
data = open(sys.argv[1], 'rb').read()
head, _, rest = data.partition(b'BB Table: ')
n_line, _, table = rest.partition(b'\n')
n = int(n_line.split()[0])
assert head.startswith(b'DRCOV VERSION: 2\n'), 'no drcov header'
m = re.search(rb'\n 0, 0x([0-9a-f]+), 0x([0-9a-f]+),', head)
base = int(m.group(1), 16)
assert len(table) == 8 * n, 'BB table has %d bytes for %d blocks' % (len(table), n)
drcov = sorted((base + s, z) for s, z, mod in struct.iter_unpack('<IHH', table) if mod == 0)
text = []
for line in open(sys.argv[2]):
    m = re.match(r'0x([0-9a-f]+) +(\d+) +\d+ +\S+/0x([0-9a-f]+)', line)
    if m and int(m.group(2)) > 0:
        text.append((int(m.group(1), 16), int(m.group(3), 16)))
text.sort()
assert drcov == text, 'drcov %d blocks, text %d; first difference %s' % (
    len(drcov), len(text), next((a, b) for a, b in zip(drcov + [None], text + [None]) if a != b))
print('%d blocks' % n)
PY
then pass drcov_matches_text; else bad drcov_matches_text; fi

# --- annotate: its counts sum to icount's total for the same workload ------
"$K" report -i "$S/badfd.data" --vmlinux "$V" --format annotate '*' > "$R/annotate.txt" 2> "$R/annotate.err"
sum=$(sed -n 's/^total \([0-9]*\) instructions executed in .*(blocks: \([0-9]*\))$/\1 \2/p' "$R/annotate.txt")
icount=$("$K" report -i "$S/badfd-icount.data" | awk '$1 == "instructions" {print $2}')
read -r asum bsum <<< "$sum"
if [ -n "$asum" ] && [ "$asum" = "$bsum" ] && [ "$asum" = "$icount" ]; then
  pass annotate_sums_to_icount "$asum"
else
  bad annotate_sums_to_icount "annotate ${asum:-?}, blocks ${bsum:-?}, icount ${icount:-?} $(cat "$R/annotate.err")"
fi
if grep -q 'ksys_read' "$R/annotate.txt"; then pass annotate_names_ksys_read; else bad annotate_names_ksys_read; fi

# --- branches: ksys_read's `if (f.file)` on 100 reads of fd -1 ---------------
# The workload is static and reads nothing else: the branch (or each branch
# the compiler made of that line) ran exactly 100 times, all one way.
"$K" report -i "$S/badfd.data" --vmlinux "$V" --format branches > "$R/branches.txt" 2> "$R/branches.err" \
  || bad report_branches "$(cat "$R/branches.err")"
# That test is ksys_read's first if (6.1: f.file; 6.12: fd_file(f)).
line=$(grep -n '^	if (' "$SRC/fs/read_write.c" | awk -F: -v lo="$(grep -n '^ssize_t ksys_read(' "$SRC/fs/read_write.c" | cut -d: -f1)" '$1 > lo {print $1; exit}')
rows=$(awk -v line="$line" '$5 == "read_write.c" && $6 == line && $4 == "ksys_read"' "$R/branches.txt")
if [ -n "$rows" ] && awk '{ if ($1 + $2 != 100 || ($1 != 100 && $2 != 100)) bad = 1 } END { exit bad }' <<< "$rows"; then
  pass branches_known_outcome "read_write.c:$line: $(tr -s ' ' <<< "$rows" | tr '\n' ';')"
else
  bad branches_known_outcome "read_write.c:${line:-?}: ${rows:-no row} $(head -4 "$R/branches.txt" | tr '\n' ' ')"
fi
# The JSON form of the same branches: taken and not taken, 100 and 0.
if "$K" report -i "$S/badfd.data" --vmlinux "$V" --format json | python3 -c '
import json, sys
line = int(sys.argv[1])
rows = [b for b in json.load(sys.stdin)["branches"]
        if b.get("file") == "fs/read_write.c" and b.get("line") == line and b["inline_function"] == "ksys_read"]
assert rows and all(sorted((b["taken"], b["not_taken"])) == [0, 100] and b["counted"] for b in rows), rows
' "$line"; then pass branches_json; else bad branches_json; fi
if head -1 "$R/branches.txt" | grep -q '^ correct incorrect  %        Function                  File              Line'; then
  pass branches_kernel_columns
else
  bad branches_kernel_columns "$(head -1 "$R/branches.txt")"
fi
# lcov branch coverage: BRDA for that line, 100 on one edge and 0 on the
# other; lcov --summary counts the branches.
"$K" report -i "$S/badfd.data" --vmlinux "$V" --format lcov --source-root "$SRC" -o "$R/badfd.info" 2> "$R/badfd-lcov.err"
brda=$(awk -v line="$line" '/^SF:/ { f = ($0 ~ /\/fs\/read_write.c$/) } f && $0 ~ ("^BRDA:" line ",") { sub(/^BRDA:/, ""); print }' "$R/badfd.info")
if [ -n "$brda" ] && awk -F, '{ n[$2] += $4; if ($4 != 0 && $4 != 100) bad = 1 } END { for (b in n) if (n[b] != 100) bad = 1; exit bad }' <<< "$brda"; then
  pass lcov_brda "$(tr '\n' ' ' <<< "$brda")"
else
  bad lcov_brda "${brda:-no BRDA for read_write.c:$line} $(cat "$R/badfd-lcov.err")"
fi
if lcov --summary --rc lcov_branch_coverage=1 "$R/badfd.info" > "$R/badfd-summary.txt" 2>&1 \
   && grep -q 'branches\.*: [0-9.]*% ([1-9]' "$R/badfd-summary.txt"; then
  pass lcov_summary_branches "$(grep 'branches\.' "$R/badfd-summary.txt")"
else
  bad lcov_summary_branches "$(cat "$R/badfd-summary.txt")"
fi

# --- -p PID, --duration, Ctrl-C: each wrote a recording of its workload ------
for d in follow duration ctrlc; do
  n=$("$K" report -i "$S/$d.data" 2> "$R/$d.err" | awk '$1 == "instructions" {print $2}')
  if [ "${n:-0}" -gt 0 ]; then pass "report_$d" "$n instructions"; else bad "report_$d" "$(cat "$R/$d.err")"; fi
done

# --- graph: nesting, durations, the call tree of calltrace ---------------------
"$K" report -i "$S/cs.data" --format graph > "$R/graph.txt" 2> "$R/graph.err" || bad report_graph "$(cat "$R/graph.err")"
if awk '/\) .*\|  .*\(\) \{$/{d++} /\|  *\}$/{d--; if (d < 0) exit 1} / -[0-9.]+ us/{exit 1} END{exit d != 0}' "$R/graph.txt" \
   && grep -q 'us  |' "$R/graph.txt"; then
  pass graph_nests
else
  bad graph_nests
fi
"$K" report -i "$S/cs.data" --format folded > "$R/folded.txt" || bad report_folded
if grep -q '^__x64_sys_openat;do_sys_openat2' "$R/folded.txt"; then pass folded_stacks; else bad folded_stacks; fi
# The tree holds every call of the recording, in order: its calls in graph
# order are the call events (what calltrace records) of the same run.
sed -n 's/.*|  *\([A-Za-z0-9_.]*\)().*/\1/p' "$R/graph.txt" > "$R/graph.calls"
"$K" report -i "$S/cs.data" --format json | python3 -c '
import json, sys
for e in json.load(sys.stdin)["events"]:
    if e["type"] in ("entry", "call"):
        print(e["function"].split("+")[0])' > "$R/events.calls"
if [ -s "$R/graph.calls" ] && cmp -s "$R/graph.calls" "$R/events.calls"; then
  pass graph_equals_calls "$(wc -l < "$R/graph.calls") calls"
else
  bad graph_equals_calls "$(diff "$R/graph.calls" "$R/events.calls" | head -5 | tr '\n' ' ')"
fi
# folded by calls and by time, against the graph as printed: per stack the
# number of calls and the sum of their self times.
"$K" report -i "$S/cs.data" --format folded --weight time > "$R/folded-time.txt" || bad report_folded_time
if out=$(python3 "$root/tests/guest/graph_check.py" folded "$R/graph.txt" "$R/folded.txt" "$R/folded-time.txt" 2>&1); then
  pass folded_weights_match_graph "$out"
else
  bad folded_weights_match_graph "$out"
fi
# The JSON form carries the same graph and folded stacks: its folded maps
# equal --format folded by calls and by time, and the self times of every
# stack add up to the threads' top-level durations.
if "$K" report -i "$S/cs.data" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
def lines(path):
    return {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(path) if l.strip()}
assert d["schema_version"] == 3 and d["document"] == "report"
assert d["folded"]["calls"] == lines(sys.argv[1]), "calls"
assert d["folded"]["time_ns"] == lines(sys.argv[2]), "time"
top = sum(c["duration_ns"] for t in d["graph"] for c in t["calls"])
# Equal unless a callee outlasted its caller by clock skew between CPUs
# after a migration (its caller'"'"'s self time is then 0, not negative).
self = sum(d["folded"]["time_ns"].values())
assert top > 0 and top <= self <= top * 1.01, (self, top)
def preorder(calls):
    for c in calls:
        yield c["function"]
        yield from preorder(c["calls"])
names = [n for t in d["graph"] for n in preorder(t["calls"])]
assert names == open(sys.argv[3]).read().split(), "graph"
' "$R/folded.txt" "$R/folded-time.txt" "$R/graph.calls"; then pass json_graph_folded; else bad json_graph_folded; fi
# Every recording of the run, whatever its tool, is one JSON document of
# the documented schema.
json_bad=0 n=0
for f in "$S"/*.data; do
  n=$((n + 1))
  if ! "$K" report -i "$f" --format json 2> "$R/json.err" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema_version"] == 3 and d["document"] == "report" and {"meta", "stats", "blocks", "calls", "events"} <= set(d), sorted(d)
'; then bad "json_$(basename "$f" .data)" "$(cat "$R/json.err")"; json_bad=1; fi
done
[ "$json_bad" = 1 ] || pass json_every_recording "$n files"
# annotate in JSON: per function, the counts sum to what its blocks executed.
if "$K" report -i "$S/badfd.data" --vmlinux "$V" --format json | python3 -c '
import json, sys
a = json.load(sys.stdin)["annotate"]
assert any(f["function"] == "ksys_read" for f in a)
for f in a:
    assert sum(i["count"] for i in f["insns"]) == f["executed"] > 0, f["function"]
'; then pass json_annotate; else bad json_annotate; fi
# The call tree equals calltrace's: the graph's calls of one run of
# `record_workload calls 20`, in order, are the calls calltrace recorded on
# a second run (graph_check.py says what is left out, and why).
"$K" report -i "$S/cs-calls.data" --format graph > "$R/graph-calls.txt" 2> "$R/graph-calls.err" \
  || bad report_graph_calls "$(cat "$R/graph-calls.err")"
"$K" report -i "$S/ct-calls.data" --format json > "$R/calltrace-calls.json" 2> "$R/calltrace-calls.err" \
  || bad report_calltrace_json "$(cat "$R/calltrace-calls.err")"
if out=$(python3 "$root/tests/guest/graph_check.py" calltrace "$R/graph-calls.txt" "$R/calltrace-calls.json" 2>&1); then
  pass graph_equals_calltrace "$out"
else
  bad graph_equals_calltrace "$out"
fi

# Instructions per call from a real recording: every measured call ran at
# least one translated instruction (its ret), most of the 20 getppid calls
# are measured (nothing sleeps in it) and each runs a plausible number
# (its body and task_tgid_vnr's: tens, not thousands).
"$K" report -i "$S/cs-calls.data" --format latency > "$R/latency-calls.txt" 2> "$R/latency-calls.err" \
  || bad report_latency_calls "$(cat "$R/latency-calls.err")"
if out=$(python3 - "$R/latency-calls.txt" <<'PY' 2>&1
import re, sys
text = open(sys.argv[1]).read()
head = text.splitlines()[0]
m = re.search(r"(\d+) calls not measured", head)
assert m, head
hists, cur = {}, None
for line in text.splitlines()[1:]:
    h = re.match(r"@(\w+)\[(.*)\]:$", line)
    if h:
        cur = hists.setdefault(h.group(1), {}).setdefault(h.group(2), [])
        continue
    b = re.match(r"\[(\d+)([KMG]?)(?:, (\d+)([KMG]?)\))?\]?\s+(\d+) \|", line)
    if b and cur is not None:
        mul = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        lo = int(b.group(1)) * mul[b.group(2)]
        hi = int(b.group(3)) * mul[b.group(4)] if b.group(3) else lo + 1
        cur.append((lo, hi, int(b.group(5))))
insns = hists.get("insns", {})
assert insns, "no @insns histogram"
for fn, buckets in insns.items():
    assert all(lo > 0 for lo, hi, n in buckets if n), (fn, "a measured call of 0 instructions")
g = next((b for fn, b in insns.items() if fn.endswith("sys_getppid")), None)
assert g, ("no @insns[__x64_sys_getppid]", sorted(insns))
calls = sum(n for lo, hi, n in g)
assert calls >= 10, ("only %d getppid calls measured" % calls)
assert all(lo >= 4 and hi <= 1024 for lo, hi, n in g if n), ("getppid", g)
measured = sum(n for b in insns.values() for lo, hi, n in b)
print("%d calls measured, %s not; getppid: %d calls in %s" % (measured, m.group(1), calls,
      [(lo, hi) for lo, hi, n in g if n]))
PY
); then pass latency_insns "$out"; else bad latency_insns "$out"; fi

# --- the workload's children, not another process ----------------------------
"$K" report -i "$S/fork.data" > "$R/fork.txt"
if grep -q '__x64_sys_newuname' "$R/fork.txt"; then pass record_follows_forks; else bad record_follows_forks; fi
# ... while it did run the attached getppid (entries the filter turned away)
filtered=$("$K" report -i "$S/fork.data" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["filtered"])')
if ! grep -v '^#' "$R/fork.txt" | grep -q 'sys_getppid' && [ "${filtered:-0}" -gt 0 ]; then
  pass record_ignores_other_process "$filtered entries of the other process filtered"
else
  bad record_ignores_other_process "$(grep -m2 getppid "$R/fork.txt")"
fi

# --- bad input: clear message, non-zero exit, no crash -------------------------
expect_error() {  # NAME WANT_RC PATTERN CMD...
  local name="$1" want="$2" pat="$3" rc=0
  shift 3
  "$@" > "$R/$name.out" 2> "$R/$name.err" || rc=$?
  if [ "$rc" = "$want" ] && grep -q "$pat" "$R/$name.err"; then pass "$name" "$(head -1 "$R/$name.err")"
  else bad "$name" "rc $rc: $(head -c 200 "$R/$name.err")"; fi
}
head -c 100 "$S/cov.data" > "$R/truncated.data"
cp "$S/cov.data" "$R/corrupt.data"
printf '\xff\xff\xff\xff' | dd of="$R/corrupt.data" bs=1 seek=200 conv=notrunc 2>/dev/null
printf 'not a kjit file\n' > "$R/other.data"
expect_error bad_truncated 1 'truncated' "$K" report -i "$R/truncated.data"
expect_error bad_corrupt 1 'corrupt' "$K" report -i "$R/corrupt.data"
expect_error bad_not_data 1 'not a kjit data file' "$K" report -i "$R/other.data"
expect_error bad_missing_file 1 'No such file' "$K" report -i "$R/none.data"
expect_error bad_format 2 'unknown format' "$K" report -i "$S/cov.data" --format nope
expect_error bad_not_vmlinux 1 'no _stext\|not an ELF' "$K" report -i "$S/cov.data" --vmlinux "$B/module/kjit.ko"
# A vmlinux of another build: the same file with one byte of its build id changed.
python3 - "$V" "$R/other-vmlinux" "$(sed -n 's/^build_id=//p' <<< "$("$K" report -i "$S/cov.data" --format json | python3 -c 'import json,sys; print("build_id=" + json.load(sys.stdin)["meta"]["build_id"])')")" <<'PY'
import mmap, shutil, sys
src, dst, bid = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
with open(src, 'rb') as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    off = m.find(bid)
    assert off > 0, 'build id not in the vmlinux'
shutil.copyfile(src, dst)
with open(dst, 'r+b') as f:
    f.seek(off)
    f.write(bytes([bid[0] ^ 0xff]))
PY
expect_error bad_build_id 1 'is not the recorded kernel: build id' "$K" report -i "$S/cov.data" --vmlinux "$R/other-vmlinux" --format lcov
rm -f "$R/other-vmlinux"
expect_error bad_graph_of_bbcount 2 'need a callstack recording' "$K" report -i "$S/cov.data" --format graph
if "$K" report --help > /dev/null; then pass report_help; else bad report_help; fi

exit "$fail"
