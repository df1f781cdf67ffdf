#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ctest bench.analyze_stamps: bench/lib/analyze.py on two made-up runs (no
guest).  Run A measures five -icount configurations, run B, later, only two
of them, into the same results directory, which also holds a row from
before stamps.  Checks: B's rows carry B's stamp, A's rows keep A's stamp
and are marked older, the pre-stamp row says so; a target over rows of A and
B is not judged; one over a single run is; cold and warm macro are judged
each against its own bound.
Usage: tests/bench/analyze-stamps.py [REPO_ROOT]"""
import json, os, subprocess, sys, tempfile

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
analyze = os.path.join(root, "bench/lib/analyze.py")
MICRO = ["null", "read", "write", "stat", "fstat", "openclose", "select",
         "siginstall", "sigdeliver", "pipe", "fork", "exec"]
failures = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def stamp(run, commit):
    return {"run": run, "commit": commit, "dirty": False, "date": run, "mode": "icount", "reps": 3,
            "secs": "0.15", "macro_secs": "2", "smp": "1", "kjit_ko_sha256": "0" * 16}


def config(runs, cfg, st, micro, cold, warm, reps=3, timed_out=False):
    """One boot's output: `reps` repetitions, native 100 per op and 1000 req/s;
    the configuration `micro` times slower, its macro `cold`/`warm` times;
    timed_out: boot.sh's limit stopped it (rc 124, no status)."""
    d = os.path.join(runs, "icount", cfg)
    od = os.path.join(d, "out", cfg)
    os.makedirs(od)
    json.dump(st, open(os.path.join(d, "stamp.json"), "w"))
    open(os.path.join(d, "boot.rc"), "w").write("124\n" if timed_out else "0\n")
    if not timed_out:
        open(os.path.join(od, "status"), "w").write("ok\n")

    def lines(f, rc, rw):
        return ["lmb %s iters 1000 ns 1 tsc 1 ns_per_op %.4f" % (b, 100.0 * f) for b in MICRO] + \
               ["macro-cold rps %.4f" % (1000.0 / rc), "macro rps %.4f" % (1000.0 / rw)]
    for i in range(1, reps + 1):
        open(os.path.join(od, "rep%d-native.txt" % i), "w").write("\n".join(lines(1, 1, 1)) + "\n")
        open(os.path.join(od, "rep%d-config.txt" % i), "w").write("\n".join(lines(micro, cold, warm)) + "\n")


def target(md, text):
    """The verdict cell of the -icount targets row whose target starts with text."""
    sec = md.split("### Targets (icount)", 1)[1]
    for line in sec.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 5 and cells[2].startswith(text):
            return cells[4]
    return None


def rows(md, cfg):
    return [l for l in md.split("## Mode: -icount", 1)[1].splitlines() if l.startswith("| %s |" % cfg)]


with tempfile.TemporaryDirectory() as t:
    res, ra, rb = os.path.join(t, "results"), os.path.join(t, "runA"), os.path.join(t, "runB")
    os.makedirs(res)
    # A row from before stamps: no "stamp", one macro run (the cold one).
    legacy = {"status": "ok", "boot_rc": "0", "memory": {}, "micro_geomean": 1.5,
              "ratios": {"macro": {"ratio": 1.4, "min": 1.4, "max": 1.4, "n": 1}}}
    json.dump({"modes": {"icount": {"kjit-syscount": legacy}}}, open(os.path.join(res, "summary.json"), "w"))
    A, B = stamp("2026-01-01T10:00:00Z", "aaaaaaa"), stamp("2026-02-01T10:00:00Z", "bbbbbbb")
    config(ra, "native", A, 1.0, 1.0, 1.0)
    config(ra, "kjit-none", A, 1.2, 1.3, 1.2)
    config(ra, "kjit-bbcount", A, 1.3, 1.3, 1.2)
    config(ra, "kjit-calltrace", A, 1.10, 1.3, 1.05)
    config(ra, "kprobe-bb", A, 80.0, 30.0, 30.0)
    # B: no tool warm 1.02 (<= 1.03: met), cold 1.12 (> 1.08: missed)
    config(rb, "kjit-none", B, 1.04, 1.12, 1.02)
    config(rb, "kjit-bbcount", B, 1.10, 1.15, 1.05)
    config(rb, "kjit-cache64", B, 50.0, 9.0, 9.0, reps=1, timed_out=True)
    for runs in (ra, rb):
        p = subprocess.run([sys.executable, analyze, runs, res], capture_output=True, text=True)
        check(p.returncode == 0, "analyze.py %s exits 0 (%s)" % (os.path.basename(runs), p.stderr.strip()[-300:]))
    s = json.load(open(os.path.join(res, "summary.json")))
    md = open(os.path.join(res, "RESULTS.md")).read()
    M = s["modes"]["icount"]

    check(s.get("newest_run") == B["run"], "summary.json: newest_run is run B")
    check(M["kjit-none"]["stamp"]["run"] == B["run"] and M["kjit-none"]["stamp_status"] == "newest run",
          "kjit-none (in B) carries B's stamp, newest run")
    check(M["kjit-calltrace"]["stamp"]["run"] == A["run"] and M["kjit-calltrace"]["stamp_status"] == "older run",
          "kjit-calltrace (only in A) keeps A's stamp, marked older run")
    check(M["kjit-calltrace"]["micro_geomean"] == 1.1, "kjit-calltrace keeps A's figures")
    check(M["kjit-syscount"]["stamp"] == "unstamped (before stamps)"
          and M["kjit-syscount"]["stamp_status"] == "unstamped (before stamps)", "the pre-stamp row is unstamped")
    check("macro" not in M["kjit-syscount"]["ratios"] and M["kjit-syscount"]["ratios"]["macro-cold"]["ratio"] == 1.4,
          "the pre-stamp row's one macro run is its cold figure")
    check(rows(md, "kjit-calltrace") and all("aaaaaaa" in l and "(older run)" in l for l in rows(md, "kjit-calltrace")),
          "RESULTS.md: every kjit-calltrace row names A's commit and says older run")
    check(rows(md, "kjit-none") and all("bbbbbbb" in l and "older" not in l for l in rows(md, "kjit-none")),
          "RESULTS.md: every kjit-none row names B's commit, not older")
    check(rows(md, "kjit-cache64") and all("timed out" in l and "1 of 3 reps" in l for l in rows(md, "kjit-cache64")),
          "a boot that timed out after 1 of 3 repetitions says so on each of its rows")
    check(rows(md, "kjit-none") and all("reps**" not in l for l in rows(md, "kjit-none")),
          "a finished boot's rows carry no such mark")
    check(rows(md, "kjit-syscount") and all("unstamped (before stamps)" in l for l in rows(md, "kjit-syscount")),
          "RESULTS.md: the kjit-syscount row says unstamped (before stamps)")

    v = target(md, "block counting >= 50x faster than kprobes")
    check(v == "not judged (rows from different runs)", "kprobe-bb (A) against kjit-bbcount (B): %r" % v)
    v = target(md, "fast path: call tracing adds")
    check(v == "n/a (not measured)", "call tracing against kprobe-call, not measured: %r" % v)
    v = target(md, "call tracing micro geomean <= 1.15")
    check(v == "met", "call tracing micro 1.10 (one row of A): %r" % v)
    v = target(md, "no tool macro warm")
    check(v == "met", "no tool macro warm 1.02 <= 1.03 judged: %r" % v)
    v = target(md, "no tool macro cold")
    check(v == "**missed**", "no tool macro cold 1.12 > 1.08 judged: %r" % v)
    v = target(md, "block counting macro cold <= 1.18")
    check(v == "met", "block counting macro cold 1.15 <= 1.18 judged: %r" % v)
    v = target(md, "block counting macro warm")
    check(v == "met", "block counting macro warm 1.05 <= 1.10 judged: %r" % v)

    # The same partial run analysed again (BENCH_ANALYZE_ONLY) changes nothing.
    before = open(os.path.join(res, "summary.json")).read()
    subprocess.run([sys.executable, analyze, rb, res], capture_output=True, text=True)
    check(open(os.path.join(res, "summary.json")).read() == before, "analysing run B again changes nothing")
    # An older run's directory does not overwrite newer rows.
    subprocess.run([sys.executable, analyze, ra, res], capture_output=True, text=True)
    M = json.load(open(os.path.join(res, "summary.json")))["modes"]["icount"]
    check(M["kjit-none"]["stamp"]["run"] == B["run"], "analysing run A after B keeps B's kjit-none row")

if failures:
    print("analyze-stamps: %d check(s) failed" % len(failures), file=sys.stderr)
    sys.exit(1)
print("analyze-stamps: all checks passed")
