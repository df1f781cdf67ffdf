#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ctest bench.analyze_stamps: bench/lib/analyze.py on made-up runs (no
guest).  Run A measures five -icount configurations, run B, later, only two
of them, into the same results directory, which also holds a row from
before stamps.  Checks: B's rows carry B's stamp, A's rows keep A's stamp
and are marked older, the pre-stamp row says so; a target over rows of A and
B is not judged; one over a single run is; cold and warm macro are judged
each against its own bound.  Then one run per way a row fails, its figures
inside their bounds: lmb stopping early (partial), a boot that failed after
a good run, a boot that timed out, dirty or missing kernel logs and boot rc
1, wrk's errors; none is judged, each says why, analyze.py exits 3.
Usage: tests/bench/analyze-stamps.py [REPO_ROOT]"""
import json, os, subprocess, sys, tempfile

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
analyze_py = os.path.join(root, "bench/lib/analyze.py")
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


def rep_lines(f, rc, rw, stop=None, wrk_error=None):
    """One run's output: lmb's lines (native 100 per op times f) up to the
    benchmark `stop`, where lmb fails, then wrk's (1000 req/s over rc, rw)."""
    out = []
    for b in MICRO:
        if b == stop:
            out.append("lmb: %s: Resource temporarily unavailable" % b)
            break
        out.append("lmb %s iters 1000 ns 1 tsc 1 ns_per_op %.4f" % (b, 100.0 * f))
    out.append("lmb-exit %d" % (1 if stop else 0))
    out += ["macro-cold rps %.4f" % (1000.0 / rc), "macro rps %.4f" % (1000.0 / rw)]
    return out + (["macro errors " + wrk_error] if wrk_error else [])


def config(runs, cfg, st, micro, cold, warm, reps=3, done=None, timed_out=False, rc=None, stop=None,
           wrk_error=None, console="", dmesg=""):
    """One boot's output: `reps` repetitions begun, `done` (all) finished;
    native 100 per op and 1000 req/s; the configuration `micro` times slower,
    its macro `cold`/`warm` times; timed_out: boot.sh's limit stopped it (rc
    124, no status), in the repetition after the last one done; stop: lmb
    fails at that benchmark in the configuration's runs; wrk_error: a wrk
    error line in them; console, dmesg: kernel log lines (dmesg None: the
    guest wrote none)."""
    d = os.path.join(runs, "icount", cfg)
    od = os.path.join(d, "out", cfg)
    os.makedirs(od)
    done = reps if done is None else done
    json.dump(st, open(os.path.join(d, "stamp.json"), "w"))
    open(os.path.join(d, "boot.rc"), "w").write("%s\n" % (rc if rc is not None else 124 if timed_out else 0))
    open(os.path.join(d, "console.log"), "w").write("[    0.000000] Linux version 6.1.0\n" + console)
    if dmesg is not None:
        open(os.path.join(od, "dmesg.txt"), "w").write("[    0.000000] Linux version 6.1.0\n" + dmesg)
    if not timed_out:
        open(os.path.join(od, "status"), "w").write("ok\n")
    open(os.path.join(od, "setup.log"), "w").write("".join("rep %d done\n" % i for i in range(1, done + 1)))
    for i in range(1, reps + 1):
        open(os.path.join(od, "rep%d-native.txt" % i), "w").write("\n".join(rep_lines(1, 1, 1)) + "\n")
        if i <= done:
            open(os.path.join(od, "rep%d-config.txt" % i), "w").write(
                "\n".join(rep_lines(micro, cold, warm, stop, wrk_error)) + "\n")


def failed_boot(runs, cfg, st, rc=125):
    """A boot that failed before the driver wrote anything: run.sh's share
    with its stamp, boot.sh's rc and the console."""
    d = os.path.join(runs, "icount", cfg)
    os.makedirs(d)
    json.dump(st, open(os.path.join(d, "stamp.json"), "w"))
    open(os.path.join(d, "boot.rc"), "w").write("%d\n" % rc)
    open(os.path.join(d, "console.log"), "w").write("Kernel panic - not syncing: VFS: Unable to mount root fs\n")


def analyze(runs, res):
    """analyze.py on one run: (exit status, stderr, summary, RESULTS.md)."""
    p = subprocess.run([sys.executable, analyze_py, runs, res], capture_output=True, text=True)
    try:
        s = json.load(open(os.path.join(res, "summary.json")))
        md = open(os.path.join(res, "RESULTS.md")).read()
    except (OSError, ValueError):
        s, md = {}, ""
    return p.returncode, p.stderr, s, md


def target(md, text, cell=4):
    """The verdict cell (cell=5: the run cell) of the -icount targets row
    whose target starts with text."""
    sec = md.split("### Targets (icount)", 1)[-1]
    for line in sec.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and cells[2].startswith(text):
            return cells[cell]
    return None


def rows(md, cfg):
    return [l for l in md.split("## Mode: -icount", 1)[-1].splitlines() if l.startswith("| %s |" % cfg)]


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
    rc, err, s, md = analyze(ra, res)
    check(rc == 0, "analyze.py runA exits 0 (%s)" % err.strip()[-300:])
    rc, err, s, md = analyze(rb, res)
    check(rc == 3 and "icount kjit-cache64: boot timed out" in err and err.count("not judged:") == 1,
          "analyze.py runB exits 3, naming the boot that timed out and nothing else (%s)" % err.strip()[-300:])
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
    analyze(rb, res)
    check(open(os.path.join(res, "summary.json")).read() == before, "analysing run B again changes nothing")
    # An older run's directory does not overwrite newer rows.
    analyze(ra, res)
    M = json.load(open(os.path.join(res, "summary.json")))["modes"]["icount"]
    check(M["kjit-none"]["stamp"]["run"] == B["run"], "analysing run A after B keeps B's kjit-none row")

# Each case below is one made-up run whose rows must not be judged; its
# figures are inside every bound it reads, so only the refusal stops a "met".
NO_TOOL_MICRO, NO_TOOL_WARM = "no tool micro geomean <= 1.05", "no tool macro warm"


def case(name, boots):
    """analyze.py on a run made by boots(runs_dir, stamp): (rc, stderr, summary, RESULTS.md)."""
    with tempfile.TemporaryDirectory() as t:
        runs, res = os.path.join(t, "runs"), os.path.join(t, "results")
        boots(runs, stamp("2026-03-01T10:00:00Z", name))
        return analyze(runs, res)


# Partial: lmb fails at fork (10 of 12 benchmarks) in kjit-none's runs.
rc, err, s, md = case("partial0", lambda runs, st: config(runs, "kjit-none", st, 1.04, 1.05, 1.02, stop="fork"))
v = target(md, NO_TOOL_MICRO)
check(v == "partial 10/12, not judged (config reps 1,2,3: lmb exited 1 (lmb: fork: Resource temporarily unavailable))",
      "partial: the micro geomean of 10/12 benchmarks is not judged, lmb's exit says why: %r" % v)
v = target(md, NO_TOOL_WARM)
check(v is not None and v.startswith("partial 10/12, not judged"), "partial: nor is its macro: %r" % v)
check(rows(md, "kjit-none") and "1.04 (partial 10/12)" in rows(md, "kjit-none")[0]
      and "**1.04**" not in rows(md, "kjit-none")[0], "partial: the table's geomean says partial 10/12, not in bold")
check(rc == 3 and "kjit-none" in err, "partial: analyze.py exits 3 and names the row (%d)" % rc)

# Failed boot: run B measured kjit-none; run C's boot of it crashed before
# the driver wrote anything.  C's row says so; B's figures are not judged on.
with tempfile.TemporaryDirectory() as t:
    res, rb, rc_ = os.path.join(t, "results"), os.path.join(t, "runB"), os.path.join(t, "runC")
    B, C = stamp("2026-02-01T10:00:00Z", "bbbbbbb"), stamp("2026-03-01T10:00:00Z", "ccccccc")
    config(rb, "kjit-none", B, 1.04, 1.05, 1.02)
    config(rb, "kjit-bbcount", B, 1.10, 1.15, 1.05)
    analyze(rb, res)
    check(target(open(os.path.join(res, "RESULTS.md")).read(), NO_TOOL_MICRO) == "met",
          "failed boot: run B's kjit-none is judged first")
    failed_boot(rc_, "kjit-none", C)
    rc, err, s, md = analyze(rc_, res)
v = target(md, NO_TOOL_MICRO)
check(v == "not judged (boot failed: no done file (a crash or a hang))", "failed boot: target not judged: %r" % v)
r = rows(md, "kjit-none")
check(r and "ccccccc" in r[0] and "not measured: boot failed" in r[0] and "bbbbbbb" not in r[0],
      "failed boot: kjit-none's row is run C's and says its boot failed: %r" % (r[:1],))
check(rows(md, "kjit-bbcount") and "(older run)" in rows(md, "kjit-bbcount")[0],
      "failed boot: run B's other row is now older")
check(s.get("newest_run") == C["run"] and rc == 3 and "icount kjit-none: boot failed" in err,
      "failed boot: run C is the newest, analyze.py exits 3 naming it (%d, %s)" % (rc, err.strip()[-200:]))

# Timed out: 4 repetitions planned, 3 done, the 4th stopped by BENCH_TIMEOUT.
rc, err, s, md = case("timeout", lambda runs, st: config(runs, "kjit-none", dict(st, reps=4), 1.04, 1.05, 1.02,
                                                         reps=4, done=3, timed_out=True))
v = target(md, NO_TOOL_MICRO)
check(v == "not judged (boot timed out at BENCH_TIMEOUT, wall clock)", "timed out: not judged, says so: %r" % v)
v = target(md, NO_TOOL_MICRO, cell=5)
check(v is not None and "3 of 4 reps" in v, "timed out: the target's run cell says 3 of 4 reps: %r" % v)
check(rows(md, "kjit-none") and all("3 of 4 reps" in l and "timed out" in l for l in rows(md, "kjit-none")),
      "timed out: every row says 3 of 4 reps, timed out")
check(rc == 3, "timed out: analyze.py exits 3")


# Dirty kernel logs: a WARN in kjit-none's dmesg, an oops on kjit-bbcount's
# console, no dmesg.txt from kjit-calltrace's guest (a missing log is no
# clean one), boot rc 1 for kjit-kcov-beside (status ok).
def dirty(runs, st):
    config(runs, "kjit-none", st, 1.04, 1.05, 1.02,
           dmesg="[   12.5] WARNING: CPU: 0 PID: 93 at kernel/kprobes.c:1234 arm_kprobe+0x1/0x2\n")
    config(runs, "kjit-bbcount", st, 1.10, 1.15, 1.05,
           console="[   40.1] BUG: unable to handle page fault for address: ffffffffc0401000\n")
    config(runs, "kjit-calltrace", st, 1.10, 1.15, 1.05, dmesg=None)
    config(runs, "kjit-kcov-beside", st, 1.01, 1.0, 1.0, rc=1)


rc, err, s, md = case("dirty", dirty)
v = target(md, NO_TOOL_MICRO)
check(v == "not judged (kernel log dmesg.txt: [   12.5] WARNING: CPU: 0 PID: 93 at kernel/kprobes.c:1234 "
      "arm_kprobe+0x1/0x2)", "dirty log: a WARN in dmesg refuses the row: %r" % v)
v = target(md, "block counting micro geomean <= 1.12")
check(v is not None and v.startswith("not judged (kernel log console.log: [   40.1] BUG: unable"),
      "dirty log: a BUG on the console refuses the row: %r" % v)
v = target(md, "call tracing micro geomean <= 1.15")
check(v == "not judged (kernel log dmesg.txt: kernel-log-errors: cannot read dmesg.txt)",
      "dirty log: a missing dmesg.txt refuses the row: %r" % v)
v = target(md, "kcov-beside (a process beside")
check(v == "not judged (boot rc 1)", "boot rc 1 refuses the row: %r" % v)
check(rows(md, "kjit-none") and "not judged: kernel log dmesg.txt" in rows(md, "kjit-none")[0],
      "dirty log: the table's run cell says why")
check(rc == 3 and err.count("not judged:") == 4, "dirty log: analyze.py exits 3, naming the four rows")


# wrk errors: timeouts in kjit-none's runs, non-2xx responses in kjit-bbcount's.
def wrk_errors(runs, st):
    config(runs, "kjit-none", st, 1.04, 1.05, 1.02, wrk_error="Socket errors: connect 0, read 0, write 0, timeout 12")
    config(runs, "kjit-bbcount", st, 1.10, 1.15, 1.05, wrk_error="Non-2xx or 3xx responses: 5")


rc, err, s, md = case("wrk", wrk_errors)
v = target(md, NO_TOOL_WARM)
check(v == "not judged (config reps 1,2,3: wrk Socket errors: connect 0, read 0, write 0, timeout 12)",
      "wrk errors: timeouts refuse the row: %r" % v)
v = target(md, "block counting macro warm")
check(v == "not judged (config reps 1,2,3: wrk Non-2xx or 3xx responses: 5)",
      "wrk errors: non-2xx responses refuse the row: %r" % v)
check(rc == 3, "wrk errors: analyze.py exits 3")

if failures:
    print("analyze-stamps: %d check(s) failed" % len(failures), file=sys.stderr)
    sys.exit(1)
print("analyze-stamps: all checks passed")
