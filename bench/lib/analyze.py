#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench runs into bench/results/{summary.json,RESULTS.md} and gnuplot
scripts (bench/run.sh runs gnuplot on them).
Usage: analyze.py RUNS_DIR RESULTS_DIR [ELAPSED_SECONDS]
Exit status: 0; 3 when rows of the newest run cannot be judged (listed on
stderr: a boot that failed, a check that failed, bench/lib/checks.py); the
results are written either way; 1 on other errors.
RUNS_DIR/MODE/CONFIG/out/CONFIG/repN-{native,config}.txt hold `lmb NAME iters N
ns T tsc C ns_per_op X` lines, `lmb-exit STATUS`, and `macro-cold rps R`,
`macro rps R` (`macro errors LINE`: wrk's error lines);
repN-stats-{micro,macro-cold,macro}.txt hold kjitctl stats ("key value") or kprobench
stats; RUNS_DIR/MODE/CONFIG/stamp.json the stamp of the run that measured it
(bench/lib/stamps.py).
Ratio = configuration time per operation / native time per operation in the
same boot and repetition (macro: native requests/s / configuration
requests/s); reported: median over repetitions, with min and max.
Every row keeps the stamp of its run: a configuration this run did not
measure keeps its row from RESULTS_DIR/summary.json (or RUNS_DIR) with its
own, older stamp, and RESULTS.md marks it."""
import json, math, os, statistics, sys

import checks
import results_md
import stamps
from configs import CONFIGS, MICRO, MODES


def parse(path):
    """{benchmark: time per operation}; "two_macro_runs": the file has a
    macro-cold line (the driver runs wrk twice after the flush)."""
    r = {}
    try:
        for line in open(path):
            f = line.split()
            if len(f) >= 10 and f[0] == "lmb":
                r[f[1]] = float(f[9])
            elif len(f) >= 2 and f[0] == "macro-cold":
                r["two_macro_runs"] = True
            if len(f) == 3 and f[0] in ("macro", "macro-cold") and f[1] == "rps":
                rps = float(f[2])
                if rps > 0:
                    r[f[0]] = 1.0 / rps
    except OSError:
        pass
    return r


def parse_kcov(path):
    """lmb -k pc|cmp lines: {benchmark: (KCOV entries per operation, a batch filled the buffer)}"""
    r = {}
    try:
        for line in open(path):
            f = line.split()
            if len(f) >= 14 and f[0] == "lmb" and f[10] == "kcov_per_op":
                r[f[1]] = (float(f[11]), f[13] == "1")
    except OSError:
        pass
    return r


def kv(path):
    d = {}
    try:
        for line in open(path):
            f = line.split()
            if len(f) == 2:
                try:
                    d[f[0]] = int(f[1])
                except ValueError:
                    pass
    except OSError:
        pass
    return d


def completion(stats, base):
    """The share of the entries that ended which the cache followed to their
    end, as kjitctl computes it (tools/kjitctl: print_completion), counted
    since the snapshot `base` (the counts run from the engine's creation;
    `sleeping` is a gauge)."""
    if "entered" not in stats:
        return None
    d = lambda k: stats.get(k, 0) - base.get(k, 0)
    ended = d("entered") - stats.get("sleeping", 0) + base.get("sleeping", 0) - d("kjit_control")
    done = d("completed") + d("task_exits")
    return {"percent": round(100.0 * done / ended, 3) if ended > 0 else 100.0, "ended": ended,
            "completed": done, "sleeps_followed": d("sleeps_followed"),
            "left_sleep_off": d("left_sleep_off"), "left_native_call": d("left_native_call")}


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


SINGLE_RUN_NOTE = ("one wrk run after the flush (the driver before it ran wrk twice): "
                   "the cold run, by the definition its targets were set with")


def single_run_is_cold(ratios):
    """A row measured when the driver ran wrk once after the flush has only
    "macro", and that run built the cache: it is the cold figure."""
    if "macro" in ratios and "macro-cold" not in ratios:
        ratios["macro-cold"] = ratios.pop("macro")
        return True
    return False


def reps_done(od):
    """The repetitions the driver finished ("rep N done" in setup.log), or
    None without a log."""
    try:
        return sum(1 for l in open(os.path.join(od, "setup.log")) if l.startswith("rep ") and l.split()[2:] == ["done"])
    except OSError:
        return None


def measure(mdir, cfg, od):
    """The row of one configuration from its run directory; a boot that
    failed before the driver wrote anything gives a row that says so."""
    share = os.path.join(mdir, cfg)
    try:
        rc = open(os.path.join(share, "boot.rc")).read().strip()
    except OSError:
        rc = "?"
    try:
        stamp = json.load(open(os.path.join(share, "stamp.json")))
    except (OSError, ValueError):
        stamp = stamps.UNSTAMPED
    C = {"status": checks.boot_status(od, rc), "boot_rc": rc, "ratios": {}, "memory": {}, "stamp": stamp,
         "reps_done": reps_done(od)}
    files = os.listdir(od) if os.path.isdir(od) else []
    reps = sorted(int(f[3:-11]) for f in files if f.startswith("rep") and f.endswith("-native.txt"))
    C["refused"] = checks.refusals(share, od, reps, rc)
    per, kc = {}, {}
    for i in reps:
        n = parse(os.path.join(od, f"rep{i}-native.txt"))
        c = parse(os.path.join(od, f"rep{i}-config.txt"))
        if not stamps.is_stamped(stamp) and not c.get("two_macro_runs"):
            single_run_is_cold(n), single_run_is_cold(c)
            C["macro_single_run"] = SINGLE_RUN_NOTE
        for b in MICRO + ["macro", "macro-cold"]:
            if b in n and b in c:
                per.setdefault(b, []).append(c[b] / n[b])
        # KCOV: the time added per operation over the entries the
        # operation appended (ns; -icount: guest instructions)
        for b, (e, full) in parse_kcov(os.path.join(od, f"rep{i}-config.txt")).items():
            if b in n and b in c and e > 0:
                kc.setdefault(b, []).append((e, c[b] - n[b], full))
    for b, xs in kc.items():
        C.setdefault("kcov", {})[b] = {
            "entries_per_op": round(statistics.median(x[0] for x in xs), 1),
            "added_ns_per_op": round(statistics.median(x[1] for x in xs), 1),
            "added_ns_per_entry": round(statistics.median(x[1] / x[0] for x in xs), 2),
            "buffer_filled": any(x[2] for x in xs)}
    for b, xs in per.items():
        C["ratios"][b] = {"ratio": round(statistics.median(xs), 4), "min": round(min(xs), 4),
                          "max": round(max(xs), 4), "n": len(xs)}
    g = geomean([C["ratios"][b]["ratio"] for b in MICRO if b in C["ratios"]])
    if g and all(b in C["ratios"] for b in MICRO):
        C["micro_geomean"] = round(g, 4)
    elif g:
        C["micro_geomean_partial"] = round(g, 4)
    # macro-cold: the stats between the two wrk runs (cumulative, like the
    # others), for what the warm run still built or flushed
    stats = {w: kv(os.path.join(od, f"rep{reps[-1]}-stats-{w}.txt")) if reps else {}
             for w in ("micro", "macro-cold", "macro")}
    for w, s in stats.items():
        keep = {k: s[k] for k in ("cache_bytes_used", "arena_bytes_used", "flushes", "blocks_built",
                                  "text_flushes", "reclaims", "switches", "load_flushes",
                                  "traces_retired", "blocks_retired",
                                  "registered", "failed", "hits", "optimized", "cache_size") if k in s}
        if keep:
            C["memory"][w] = keep
    # completion over micro, then over both wrk runs from the micro snapshot
    base = {}
    for w in ("micro", "macro"):
        s = stats[w]
        done = completion(s, base)
        if done:
            C.setdefault("completion", {})[w] = done
        base = s
    try:
        C["notes"] = [l.strip() for l in open(os.path.join(od, "setup.log")) if l.strip()][-6:]
    except OSError:
        pass
    return C


def previous_rows(res):
    """The rows of the last summary.json; rows written before stamps get
    UNSTAMPED, and their one-run macro becomes macro-cold."""
    try:
        modes = json.load(open(os.path.join(res, "summary.json"))).get("modes", {})
    except (OSError, ValueError):
        return {}
    for M in modes.values():
        for C in M.values():
            if "stamp" not in C:
                C["stamp"] = stamps.UNSTAMPED
                if single_run_is_cold(C.get("ratios", {})):
                    C["macro_single_run"] = SINGLE_RUN_NOTE
    return modes


def newer(a, b):
    """Of two rows of one configuration, the one measured later: a stamped
    row wins over an unstamped one; between unstamped ones, a (the run
    directory) wins."""
    if a is None or b is None:
        return a or b
    ra, rb = stamps.run_of(a), stamps.run_of(b)
    return b if rb and (not ra or rb > ra) else a


def runs_index(modes, newest):
    """{run id: stamp summary and the configurations it measured, per mode}"""
    out = {}
    for mode, M in modes.items():
        for cfg, C in M.items():
            r = stamps.run_of(C)
            key = r or stamps.UNSTAMPED
            e = out.setdefault(key, {"newest": r is not None and r == newest, "configs": {}})
            if r:
                e.update({k: C["stamp"][k] for k in ("commit", "dirty") if k in C["stamp"]})
            e["configs"].setdefault(mode, []).append(cfg)
    for e in out.values():
        for mode in e["configs"]:
            e["configs"][mode].sort(key=lambda c: CONFIGS.index(c) if c in CONFIGS else len(CONFIGS))
    return out


def main():
    runs, res = sys.argv[1], sys.argv[2]
    elapsed = sys.argv[3] if len(sys.argv) > 3 else None
    os.makedirs(res, exist_ok=True)
    previous = previous_rows(res)
    modes = {}
    for mode in MODES:
        mdir = os.path.join(runs, mode)
        M = {}
        for cfg in CONFIGS:
            # run.sh makes the directory before it boots: a boot that
            # failed early still gives its row, newer than the last one
            od = os.path.join(mdir, cfg, "out", cfg)
            row = measure(mdir, cfg, od) if os.path.isdir(os.path.join(mdir, cfg)) else None
            row = newer(row, previous.get(mode, {}).get(cfg))
            if row:
                M[cfg] = row
        if M:
            modes[mode] = M
    newest = stamps.newest_run(modes)
    for M in modes.values():
        for C in M.values():
            C["stamp_status"] = stamps.status(C, newest)
    summary = {"method": {
        "ratio": "time per operation with the configuration / native, same boot and repetition; median over repetitions",
        "macro": "nginx-light serving a 1 KiB file to wrk (-t1 -c4) over loopback in the guest; ratio = native req/s / config req/s; kjit's cache is flushed before, and wrk runs twice: macro-cold is the first run (it pays for building the cache), macro the second, warm (from the cache the first built); native runs twice as well. A row with macro_single_run was measured when wrk ran once after the flush: that run is its macro-cold",
        "stamp": "each row: the run that measured it (bench/lib/stamps.py): run (start of bench/run.sh, UTC), commit, dirty, date (this configuration's boot, UTC), mode, reps; '%s' for rows measured before stamps. stamp_status: newest run, older run, or unstamped" % stamps.UNSTAMPED,
        "icount_caveat": "-icount counts guest instructions: it does not charge the hardware cost of int3 traps (kprobes) or of TCG's own work, so it flatters kprobes",
    }, "newest_run": newest, "runs": runs_index(modes, newest), "modes": modes}
    json.dump(summary, open(os.path.join(res, "summary.json"), "w"), indent=1, sort_keys=True)
    open(os.path.join(res, "RESULTS.md"), "w").write("\n".join(results_md.markdown(summary, elapsed)) + "\n")
    plots(summary, res)
    print("analyze: wrote", os.path.join(res, "RESULTS.md"))
    failed = not_judged(modes)
    for line in failed:
        print("analyze: not judged:", line, file=sys.stderr)
    return 3 if failed else 0


def not_judged(modes):
    """The newest run's rows that cannot be judged, and why: the run failed."""
    out = []
    for mode, M in modes.items():
        for cfg, C in M.items():
            rs = checks.reasons(C) + [p for p in [checks.partial(C)] if p]
            if C["stamp_status"] == "newest run" and rs:
                out.append("%s %s: %s" % (mode, cfg, checks.brief(rs)))
    return out


def plots(summary, res):
    for mode in summary["modes"]:
        M = summary["modes"][mode]
        data = []
        for cfg in CONFIGS:
            C = M.get(cfg)
            if not C or not C["ratios"]:
                continue
            data.append((cfg, C.get("micro_geomean"),
                         C["ratios"].get("macro-cold", {}).get("ratio"), C["ratios"].get("macro", {}).get("ratio")))
        with open(os.path.join(res, "overview-%s.dat" % mode), "w") as f:
            f.write("config micro_geomean macro_cold macro_warm\n")
            for d in data:
                f.write("%s %s %s %s\n" % tuple("NaN" if x is None else x for x in d))
        # gnuplot refuses a histogram column with no value at all
        series = [(i + 2, t) for i, t in enumerate(["micro geomean", "macro cold (builds the cache)",
                                                    "macro warm (from the cache)"])
                  if any(d[i + 1] is not None for d in data)]
        if not series:
            continue
        using = ['"overview-%s.dat" using %d:xtic(1) title "%s"' % (mode, series[0][0], series[0][1])]
        using += ['"" using %d title "%s"' % s for s in series[1:]]
        with open(os.path.join(res, "overview-%s.gp" % mode), "w") as f:
            f.write('set terminal svg size 1000,500 dynamic\nset output "overview-%s.svg"\n' % mode)
            f.write('set title "kjit vs probes: slowdown vs native, same boot (%s)"\n' % MODES[mode])
            f.write('set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n')
            f.write('set logscale y\nset yrange [0.5:*]\nset ylabel "ratio to native (log)"\nset grid ytics\n')
            f.write('set xtics rotate by -40 noenhanced\nset key top left\n')
            f.write("plot " + ", ".join(using) + ', 1 notitle lc rgb "black"\n')


if __name__ == "__main__":
    sys.exit(main())
