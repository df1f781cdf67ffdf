#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit-report's views of a callstack recording that need no guest: a fake
# recording with known calls and durations (write-data.py --event).
#   perfetto: Chrome trace-event JSON, checked by the trace-event rules
#             (every event has ph/ts/pid/tid/name; X events dur >= 0; B/E
#             balanced; per tid, ts monotonic and events nested) and by
#             its content; names escaped (control bytes, invalid UTF-8).
#   latency:  bpftrace hist() buckets of the known durations, byte for byte;
#             of the known instructions per call (write-data.py --event ...
#             INSNS SWITCHES), with the calls that cannot be measured
#             counted, not guessed; a version 1 file (no counts) still
#             reads, with durations only.
# Usage: tests/report/calls.sh KJIT_REPORT
set -euo pipefail
# shellcheck source=tests/report/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

A=0xffffffff81001000 B=0xffffffff81001100 C=0xffffffff81001200 D=0xffffffff81001300
syms=(--symbol A "$A" 0x100 --symbol B "$B" 0x100 --symbol C "$C" 0x100 --symbol D "$D" 0x100)
# Thread 100: A calls B three times (3, 5, 6 ns), then C (2048 ns), which
# calls D (0 ns); A lasts 4000 ns.  Thread 200: A (never returns) calls B (1 ns).
# An entry or call's sp is rsp before the call; a return's is rsp at the ret.
events=()
ev() { events+=(--event "$@"); }
ev entry "$A" 0x8000 1000 100 0
ev call "$B" 0x7f00 1100 100 0; ev return 0xffffffff81001110 0x7ef8 1103 100 0
ev call "$B" 0x7f00 1200 100 0; ev return 0xffffffff81001110 0x7ef8 1205 100 0
ev call "$B" 0x7f00 1300 100 1; ev return 0xffffffff81001110 0x7ef8 1306 100 1
ev call "$C" 0x7f00 1400 100 1
ev call "$D" 0x7e00 1500 100 1; ev return 0xffffffff81001310 0x7df8 1500 100 1
ev return 0xffffffff81001210 0x7ef8 3448 100 1
ev entry "$A" 0x9000 2000 200 1
ev call "$B" 0x8f00 2001 200 1; ev return 0xffffffff81001110 0x8ef8 2002 200 1
ev return 0xffffffff81001010 0x7ff8 5000 100 1
python3 "$here/write-data.py" "$T/cs.data" --meta tool=callstack --meta 'command=ls "/"' "${syms[@]}" "${events[@]}"

"$report" -i "$T/cs.data" -f perfetto -o "$T/trace.json" 2> "$T/err" || { cat "$T/err"; fail "perfetto"; }
cat > "$T/rules.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict) and isinstance(d["traceEvents"], list), "not the JSON Object Format"
assert d.get("displayTimeUnit") in ("ms", "ns"), d.get("displayTimeUnit")
stacks, last = {}, {}
for e in d["traceEvents"]:
    for k in ("ph", "ts", "pid", "tid", "name"):
        assert k in e, ("missing", k, e)
    assert isinstance(e["name"], str) and isinstance(e["ts"], (int, float)), e
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
    assert e["ph"] in ("B", "E", "X"), e
    tid = (e["pid"], e["tid"])
    ts = round(e["ts"] * 1000)   # ns
    assert ts >= last.get(tid, ts), ("ts goes back", e)
    last[tid] = ts
    st = stacks.setdefault(tid, [])
    # X events still open on this thread end where they end
    while st and st[-1][0] == "X" and st[-1][1] <= ts:
        st.pop()
    if e["ph"] == "X":
        assert e["dur"] >= 0, e
        end = ts + round(e["dur"] * 1000)
        assert not st or st[-1][0] != "X" or end <= st[-1][1], ("not nested in its caller", e, st[-1])
        st.append(("X", end, e["name"]))
    elif e["ph"] == "B":
        st.append(("B", None, e["name"]))
    else:
        assert st and st[-1][0] == "B" and st[-1][2] == e["name"], ("E without its B", e)
        st.pop()
for tid, st in stacks.items():
    assert all(s[0] == "X" for s in st), ("B without E", tid, st)
print(len(d["traceEvents"]))
PY
python3 "$T/rules.py" "$T/trace.json" > /dev/null || fail "perfetto: trace-event rules"
# The rules catch what they must: a callee outliving its caller, an E
# without its B, a missing field, time going back.
for bad in '{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"a"},{"ph":"X","ts":2,"dur":5,"pid":1,"tid":1,"name":"b"}' \
           '{"ph":"E","ts":1,"pid":1,"tid":1,"name":"a"}' '{"ph":"X","ts":1,"dur":2,"pid":1,"name":"a"}' \
           '{"ph":"X","ts":3,"dur":0,"pid":1,"tid":1,"name":"a"},{"ph":"X","ts":2,"dur":0,"pid":1,"tid":1,"name":"b"}'; do
  echo "{\"traceEvents\": [$bad], \"displayTimeUnit\": \"ns\"}" > "$T/bad.json"
  if python3 "$T/rules.py" "$T/bad.json" > /dev/null 2>&1; then fail "the rules accept $bad"; fi
done
echo "ok perfetto: trace-event rules hold"
python3 - "$T/trace.json" <<'PY' || fail "perfetto: content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["otherData"]["command"] == 'ls "/"', d["otherData"]
got = [(e["tid"], e["name"], round(e["ts"] * 1000), round(e["dur"] * 1000), e["args"]["finished"])
       for e in d["traceEvents"]]
want = [(100, "A", 1000, 4000, True), (100, "B", 1100, 3, True), (100, "B", 1200, 5, True),
        (100, "B", 1300, 6, True), (100, "C", 1400, 2048, True), (100, "D", 1500, 0, True),
        (200, "A", 2000, 2, False), (200, "B", 2001, 1, True)]
assert got == want, got
assert all(e["ph"] == "X" and e["pid"] == e["tid"] for e in d["traceEvents"])
PY
echo "ok perfetto: every call, its thread, ts and dur (us, ns precision)"

# Names JSON cannot hold raw: a control byte, a quote, a byte that is not UTF-8.
python3 "$here/write-data.py" "$T/odd.data" --meta tool=callstack --symbol 'we\x01ird\xff"q' "$A" 0x100 \
  --event entry "$A" 0x8000 1000 7 0 --event return 0xffffffff81001010 0x7ff8 1500 7 0
"$report" -i "$T/odd.data" -f perfetto -o "$T/odd.json" 2> "$T/err" || { cat "$T/err"; fail "perfetto: odd names"; }
grep -q 'we\\u0001ird\\ufffd\\"q' "$T/odd.json" || { cat "$T/odd.json"; fail "perfetto: escaping"; }
python3 "$T/rules.py" "$T/odd.json" > /dev/null || fail "perfetto: escaped names break the rules"
python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["traceEvents"][0]["name"]; assert n == "we\x01ird\ufffd\"q", n' \
  "$T/odd.json" || fail "perfetto: escaped name reads back wrong"
echo "ok perfetto: control bytes as \\u0001, invalid UTF-8 as U+FFFD"

"$report" -i "$T/cs.data" -f latency > "$T/hist" 2> "$T/err" || { cat "$T/err"; fail "latency"; }
cat > "$T/want" <<'W'
# kjit latency: call durations in ns per function; 1 calls without a return left out; instructions per call are absent (the module counted none: no per-CPU data window)

@duration_ns[A]:
[2K, 4K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@duration_ns[C]:
[2K, 4K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@duration_ns[D]:
[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@duration_ns[B]:
[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[2, 4)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[4, 8)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

W
diff "$T/want" "$T/hist" || fail "latency: buckets"
echo "ok latency: bpftrace hist() buckets of the known durations"

# The same calls in a version 1 file: read, the same durations, and the
# header says why there are no instruction counts.
python3 "$here/write-data.py" "$T/v1.data" --version 1 --meta tool=callstack "${syms[@]}" "${events[@]}"
"$report" -i "$T/v1.data" -f latency > "$T/hist1" 2> "$T/err" || { cat "$T/err"; fail "latency: version 1 file"; }
head -1 "$T/hist1" | grep -q 'instructions per call are absent (data format version 1 has no instruction counts)' ||
  { head -1 "$T/hist1"; fail "latency: version 1 header"; }
diff <(tail -n +2 "$T/want") <(tail -n +2 "$T/hist1") || fail "latency: version 1 durations"
grep -q '@insns' "$T/hist1" && fail "latency: instruction histogram from a version 1 file"
python3 "$here/write-data.py" "$T/v3.data" --version 3 --meta tool=callstack "${syms[@]}" "${events[@]}"
if "$report" -i "$T/v3.data" -f latency > /dev/null 2> "$T/err"; then fail "a version 3 file is read"; fi
grep -q 'data file version 3; this kjit-report reads versions 1 to 2' "$T/err" || { cat "$T/err"; fail "version 3: message"; }
echo "ok latency: version 1 recordings read (durations only), version 3 refused"

# Instructions per call: TYPE PC SP NS PID CPU INSNS SWITCHES.  Thread 100:
# B runs 3 instructions; B is switched out (switches 5 -> 6, and moves to
# CPU 1): not measured; B runs 6; C (1024) calls D (0); A spans the switch:
# not measured.  Thread 200: B runs 1, A never returns.  Thread 300: A
# runs 50, its call of B returns through code that was not translated (no
# return event of its own): not measured.  3 not measured, 1 unfinished.
ievents=()
iev() { ievents+=(--event "$@"); }
iev entry "$A" 0x8000 1000 100 0 0 5
iev call "$B" 0x7f00 1100 100 0 10 5; iev return 0xffffffff81001110 0x7ef8 1103 100 0 13 5
iev call "$B" 0x7f00 1200 100 0 20 5; iev return 0xffffffff81001110 0x7ef8 1205 100 1 90 6
iev call "$B" 0x7f00 1300 100 1 100 6; iev return 0xffffffff81001110 0x7ef8 1306 100 1 106 6
iev call "$C" 0x7f00 1400 100 1 200 6
iev call "$D" 0x7e00 1500 100 1 250 6; iev return 0xffffffff81001310 0x7df8 1500 100 1 250 6
iev return 0xffffffff81001210 0x7ef8 3448 100 1 1224 6
iev entry "$A" 0x9000 2000 200 1 300 9
iev call "$B" 0x8f00 2001 200 1 500 9; iev return 0xffffffff81001110 0x8ef8 2002 200 1 501 9
iev return 0xffffffff81001010 0x7ff8 5000 100 1 2000 6
iev entry "$A" 0xa000 6000 300 0 3000 1
iev call "$B" 0x9f00 6010 300 0 3005 1
iev return 0xffffffff81001010 0x9ff8 6100 300 0 3050 1
python3 "$here/write-data.py" "$T/ic.data" --meta tool=callstack "${syms[@]}" "${ievents[@]}"
"$report" -i "$T/ic.data" -f latency > "$T/ihist" 2> "$T/err" || { cat "$T/err"; fail "latency: instructions"; }
cat > "$T/iwant" <<'W'
# kjit latency: call durations in ns per function; 1 calls without a return left out; instructions per call (run in translated code): 3 calls not measured (thread switched out mid-call, or returned through code not translated)

@duration_ns[C]:
[2K, 4K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@duration_ns[D]:
[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@duration_ns[A]:
[64, 128)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[128, 256)             0 |                                                    |
[256, 512)             0 |                                                    |
[512, 1K)              0 |                                                    |
[1K, 2K)               0 |                                                    |
[2K, 4K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@duration_ns[B]:
[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[2, 4)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |
[4, 8)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[8, 16)                0 |                                                    |
[16, 32)               0 |                                                    |
[32, 64)               0 |                                                    |
[64, 128)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |

@insns[A]:
[32, 64)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@insns[C]:
[1K, 2K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@insns[D]:
[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@insns[B]:
[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[2, 4)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|
[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

W
diff "$T/iwant" "$T/ihist" || fail "latency: instruction buckets"
echo "ok latency: instructions per call in hist() buckets, 3 calls not measured (switched out, no own return)"

# Both need callstack events.
python3 "$here/write-data.py" "$T/bb.data" "${syms[@]}" --block "$A" 4 1 1
for f in perfetto latency; do
  if "$report" -i "$T/bb.data" -f "$f" > /dev/null 2> "$T/err"; then fail "$f of a bbcount recording"; fi
  grep -q 'need a callstack recording' "$T/err" || { cat "$T/err"; fail "$f: message"; }
done
echo "ok perfetto and latency refuse a bbcount recording"
echo "PASS report.calls"
