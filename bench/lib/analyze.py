#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench runs into bench/results/{summary.json,RESULTS.md} and gnuplot
scripts (bench/run.sh runs gnuplot on them).
Usage: analyze.py RUNS_DIR RESULTS_DIR [ELAPSED_SECONDS]
RUNS_DIR/MODE/CONFIG/out/CONFIG/repN-{native,config}.txt hold `lmb NAME iters N
ns T tsc C ns_per_op X` lines and `macro-cold rps R`, `macro rps R`;
repN-stats-{micro,macro}.txt hold kjitctl stats ("key value") or kprobench
stats; RUNS_DIR/MODE/CONFIG/stamp.json the stamp of the run that measured it
(bench/lib/stamps.py).
Ratio = configuration time per operation / native time per operation in the
same boot and repetition (macro: native requests/s / configuration
requests/s); reported: median over repetitions, with min and max.
Every row keeps the stamp of its run: a configuration this run did not
measure keeps its row from RESULTS_DIR/summary.json (or RUNS_DIR) with its
own, older stamp, and RESULTS.md marks it."""
import json, math, os, statistics, sys

import stamps
import targets

MICRO = ["null", "read", "write", "stat", "fstat", "openclose", "select",
         "siginstall", "sigdeliver", "pipe", "fork", "exec"]
CONFIGS = ["native", "kjit-none", "kjit-none-nofollow", "kjit-none-ipmodify", "kjit-none-notrace", "kjit-none-stackret", "kjit-syscount",
           "kjit-calltrace", "kjit-bbcount", "kjit-bb-notrace", "kjit-icount", "kjit-icount-dynpcpu", "kjit-bb-noliveness", "kjit-bb-noinline", "kjit-bb-noopt",
           "kjit-flush", "kjit-cache64", "kjit-cache256", "kjit-cache1024",
           "kjit-kcov-pc", "kjit-kcov-cmp", "kjit-kcov-beside",
           "kprobe-sys", "kprobe-call", "kprobe-bb", "ftrace-func", "bpftrace"]
DESC = {
    "native": "native (both runs native: the noise floor)",
    "kjit-none": "kjit, no instrumentation",
    "kjit-none-nofollow": "kjit, no instrumentation, invocations not followed through the scheduler (follow_sleeps=0: they leave the cache at their call into it)",
    "kjit-none-ipmodify": "kjit, no instrumentation, entered through the IPMODIFY ftrace_ops instead of the direct-call trampoline (direct_entry=0)",
    "kjit-none-notrace": "kjit, no instrumentation, every block on its own (trace_blocks=1: a jump at each block end instead of the next block laid after it)",
    "kjit-none-stackret": "kjit, no instrumentation, every return through the general return site (abi_returns=0: a C function's ret does not compare with cmp)",
    "kjit-syscount": "kjit, per-syscall counting (entry_count)",
    "kjit-calltrace": "kjit, call tracing",
    "kjit-bbcount": "kjit, block counting",
    "kjit-bb-notrace": "kjit, block counting, every block on its own (trace_blocks=1)",
    "kjit-icount": "kjit, instruction counting",
    "kjit-icount-dynpcpu": "kjit, instruction counting, counter in a dynamic per-CPU window (percpu_kb=16: beyond disp32, through a register)",
    "kjit-bb-noliveness": "kjit, block counting, liveness off",
    "kjit-bb-noinline": "kjit, block counting, inlining off",
    "kjit-bb-noopt": "kjit, block counting, liveness+inlining off",
    "kjit-flush": "kjit, block counting, cache flushed after every entry",
    "kjit-cache64": "kjit, block counting, 64 KiB code cache",
    "kjit-cache256": "kjit, block counting, 256 KiB code cache",
    "kjit-cache1024": "kjit, block counting, 1 MiB code cache",
    "kjit-kcov-pc": "kjit's KCOV device (`kjitctl kcov enable`: every system call and handle_mm_fault), lmb covered with KCOV_TRACE_PC (`lmb -k pc`); macro: nginx and wrk uncovered",
    "kjit-kcov-cmp": "the same with KCOV_TRACE_CMP (`lmb -k cmp`)",
    "kjit-kcov-beside": "kjit's KCOV device with one other process covered (KCOV_TRACE_PC, blocked in pause()); lmb, nginx and wrk uncovered beside it",
    "kprobe-sys": "kprobes, one per syscall entry",
    "kprobe-call": "kprobes, one per called function",
    "kprobe-bb": "kprobes, one per basic block",
    "ftrace-func": "ftrace function tracer (call tracing)",
    "bpftrace": "bpftrace, counting syscalls",
}
MODES = {"tcg": "TCG wall clock", "icount": "-icount shift=0,sleep=off (guest instructions)"}


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


def measure(mdir, cfg, od):
    """The row of one configuration from its run directory."""
    status = open(os.path.join(od, "status")).read().strip() if os.path.exists(os.path.join(od, "status")) else "crashed"
    try:
        rc = open(os.path.join(mdir, cfg, "boot.rc")).read().strip()
    except OSError:
        rc = "?"
    if status == "crashed" and rc == "124":
        status = "boot timeout (per-boot limit; host shared with other guests)"
    try:
        stamp = json.load(open(os.path.join(mdir, cfg, "stamp.json")))
    except (OSError, ValueError):
        stamp = stamps.UNSTAMPED
    C = {"status": status, "boot_rc": rc, "ratios": {}, "memory": {}, "stamp": stamp}
    reps = sorted(int(f[3:-11]) for f in os.listdir(od) if f.startswith("rep") and f.endswith("-native.txt"))
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
    base = {}
    for w in ("micro", "macro"):
        s = kv(os.path.join(od, f"rep{reps[-1]}-stats-{w}.txt")) if reps else {}
        keep = {k: s[k] for k in ("cache_bytes_used", "arena_bytes_used", "flushes", "blocks_built",
                                  "registered", "failed", "hits", "optimized", "cache_size") if k in s}
        if keep:
            C["memory"][w] = keep
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
            od = os.path.join(mdir, cfg, "out", cfg)
            row = measure(mdir, cfg, od) if os.path.isdir(od) else None
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
    open(os.path.join(res, "RESULTS.md"), "w").write("\n".join(markdown(summary, elapsed)) + "\n")
    plots(summary, res)
    print("analyze: wrote", os.path.join(res, "RESULTS.md"))


def runs_section(summary):
    """Which run measured which rows."""
    L = ["## Runs", "",
         "Every row below carries the stamp of the run that measured it (column `run`): commit (`+dirty`: the tree "
         "had uncommitted changes), start of the run (UTC), mode, repetitions. A row that is not from the newest run "
         "is marked **(older run)**; rows measured before the bench wrote stamps say `%s`. A target is judged only "
         "on rows of one run." % stamps.UNSTAMPED, ""]
    newest = summary["newest_run"]
    L.append("Newest run: %s." % (newest or "none (no row is stamped)"))
    for key, e in sorted(summary["runs"].items(), key=lambda kv: (kv[0] == stamps.UNSTAMPED, kv[0])):
        what = "; ".join("%s: %s" % (stamps.MODE_NAMES.get(m, m), ", ".join(cs)) for m, cs in e["configs"].items())
        if key == stamps.UNSTAMPED:
            L.append("- %s: %s" % (stamps.UNSTAMPED, what))
        else:
            L.append("- run %s (`%s`%s)%s: %s" % (key, e.get("commit", "?"), "+dirty" if e.get("dirty") else "",
                                                   "" if e["newest"] else " **(older run)**", what))
    return L + [""]


def macro_cell(C, b):
    r = C["ratios"].get(b)
    if not r:
        return "-"
    s = "%.2f [%.2f-%.2f]" % (r["ratio"], r["min"], r["max"]) if r["n"] > 1 else "%.2f" % r["ratio"]
    return s + (" (1 run)" if b == "macro-cold" and C.get("macro_single_run") else "")


def markdown(summary, elapsed):
    newest = summary["newest_run"]
    L = ["# kjit bench results", "",
         "Generated by `bench/lib/analyze.py` (`bench/run.sh BUILD_DIR`, `./kjit-lab bench`)%s. Every figure is a "
         "**ratio to native measured in the same boot** (time per operation; macro: native requests/s over "
         "configuration requests/s), median over the repetitions, [min-max] when there are several. Guest: the pinned "
         "Debian 6.1 cloud kernel under QEMU TCG, one vCPU, KASLR on; Debian bookworm root (debootstrap minbase + "
         "nginx-light, wrk, bpftrace)." % (", the last bench/run.sh in %s s" % elapsed if elapsed else ""),
         "", "Micro: `bench/micro/lmb.c` (lmbench-style). Macro: nginx-light serving a 1 KiB file to wrk over loopback, "
         "twice after kjit's cache is flushed: **macro cold** is the first run (it builds the cache), **macro warm** "
         "the second (from the cache the first built); native runs twice too. `(1 run)`: the row was measured when "
         "wrk ran once after the flush; that run is its cold figure and it has no warm one.",
         "kjit attaches the `__x64_sys_*` wrappers the workloads use (`bench/guest/driver.sh`, SYSCALLS).", ""]
    L += runs_section(summary)
    for mode, mname in MODES.items():
        if mode not in summary["modes"]:
            continue
        M = summary["modes"][mode]
        L += ["## Mode: %s" % mname, ""]
        if mode == "icount":
            L += ["> -icount counts guest instructions: it does **not** charge the hardware cost of the int3 traps "
                  "that kprobes take (nor TCG's own cost of self-modifying code), so it flatters kprobes.", ""]
        cols = MICRO + ["geomean", "macro cold", "macro warm"]
        key = {"macro cold": "macro-cold", "macro warm": "macro"}
        L += ["| configuration | " + " | ".join(cols) + " | run |", "|---" * (len(cols) + 2) + "|"]
        for cfg in CONFIGS:
            if cfg not in M:
                continue
            C = M[cfg]
            run = stamps.cell(C, newest)
            if C["status"] != "ok" and not C["ratios"]:
                L.append("| %s | %s |" % (cfg, ("not measured: " + C["status"] + " (" + "; ".join(C.get("notes", [])[-2:]) + ")").replace("|", "/"))
                         + " |" * (len(cols) - 1) + " %s |" % run)
                continue
            row = []
            for b in cols:
                if b == "geomean":
                    g = C.get("micro_geomean") or C.get("micro_geomean_partial")
                    row.append("**%.2f**" % g if g else "-")
                elif b in key:
                    row.append(macro_cell(C, key[b]))
                else:
                    r = C["ratios"].get(b)
                    row.append("-" if not r else "%.2f [%.2f-%.2f]" % (r["ratio"], r["min"], r["max"]) if r["n"] > 1
                               else "%.2f" % r["ratio"])
            L.append("| %s | " % cfg + " | ".join(row) + " | %s |" % run)
        L += ["", "Memory (kjitctl stats after each workload; the cache is flushed between micro and macro; kprobes: probes registered/failed):", "",
              "| configuration | micro cache B | micro arena B | macro cache B | macro arena B | flushes (micro/macro) | probes | run |",
              "|---|---|---|---|---|---|---|---|"]
        for cfg in CONFIGS:
            C = M.get(cfg)
            if not C or not C["memory"]:
                continue
            mi, ma = C["memory"].get("micro", {}), C["memory"].get("macro", {})
            probes = "%s/%s" % (mi.get("registered", "-"), mi.get("failed", "-")) if "registered" in mi else "-"
            L.append("| %s | %s | %s | %s | %s | %s/%s | %s | %s |" % (
                cfg, mi.get("cache_bytes_used", "-"), mi.get("arena_bytes_used", "-"), ma.get("cache_bytes_used", "-"),
                ma.get("arena_bytes_used", "-"), mi.get("flushes", "-"), ma.get("flushes", "-"), probes, stamps.cell(C, newest)))
        rows = [(cfg, M[cfg]) for cfg in CONFIGS if M.get(cfg, {}).get("completion")]
        if rows:
            L += ["", "Completion (kjitctl stats after each workload: entries followed to their return or their "
                  "task's exit in the cache, of the entries that ended; kjitctl's own calls left out):", "",
                  "| configuration | micro | micro entries | macro | macro entries | sleeps followed (micro/macro) | run |",
                  "|---|---|---|---|---|---|---|"]
            for cfg, C in rows:
                mi, ma = C["completion"].get("micro", {}), C["completion"].get("macro", {})
                L.append("| %s | %s%% | %s | %s%% | %s | %s/%s | %s |" % (
                    cfg, mi.get("percent", "-"), mi.get("ended", "-"), ma.get("percent", "-"), ma.get("ended", "-"),
                    mi.get("sleeps_followed", "-"), ma.get("sleeps_followed", "-"), stamps.cell(C, newest)))
        L += kcov_table(M, mode, newest)
        L += ["", "![overview %s](overview-%s.svg)" % (mode, mode), ""]
        L += targets.table(M, mode)
    L += ["", "Configurations:", ""] + ["- `%s`: %s" % (c, DESC[c]) for c in CONFIGS]
    return L


def plots(summary, res):
    for mode in summary["modes"]:
        M = summary["modes"][mode]
        data = []
        for cfg in CONFIGS:
            C = M.get(cfg)
            if not C or not C["ratios"]:
                continue
            data.append((cfg, C.get("micro_geomean") or C.get("micro_geomean_partial"),
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


def kcov_table(M, mode, newest):
    """Per benchmark: the blocks one covered operation runs (trace-PC appends
    one PC per block) and the comparison records it appends (trace-CMP), and
    the time each mode adds per block executed.  The added time includes
    running from the code cache (the kjit-none row's cost) and the entry
    filter; both modes instrument every block, trace-CMP every comparison
    as well."""
    pc, cmp = M.get("kjit-kcov-pc", {}).get("kcov"), M.get("kjit-kcov-cmp", {}).get("kcov")
    if not pc:
        return []
    unit = "guest instructions" if mode == "icount" else "ns"
    L = ["", "KCOV (`kjit-kcov-pc`, `kjit-kcov-cmp`): per covered operation, the blocks run (trace-PC's PCs) and the "
         "comparison records appended (trace-CMP), and the %s each mode adds per block: (configuration - native "
         "time per operation) / blocks. It includes running from the code cache, which `kjit-none` costs alone. "
         "`kjit-kcov-beside` (above) is what processes that are not covered pay while one is." % unit, "",
         "Rows: %s." % "; ".join("`%s` %s" % (c, stamps.cell(M[c], newest)) for c in ("kjit-kcov-pc", "kjit-kcov-cmp") if c in M), "",
         "| benchmark | blocks/op | trace-PC %s per block | CMP records/op | trace-CMP %s per block |" % (unit, unit),
         "|---|---|---|---|---|"]
    per_pc, per_cmp = [], []
    for b in MICRO:
        k = pc.get(b)
        if not k:
            continue
        blocks = k["entries_per_op"]
        a = k["added_ns_per_op"] / blocks
        per_pc.append(a)
        kc = (cmp or {}).get(b)
        c = kc["added_ns_per_op"] / blocks if kc else None
        if c is not None:
            per_cmp.append(c)
        L.append("| %s | %.1f%s | %.1f | %s | %s |" % (
            b, blocks, " (buffer filled)" if k["buffer_filled"] else "", a,
            "%.1f" % kc["entries_per_op"] if kc else "-", "%.1f" % c if c is not None else "-"))
    L.append("| median over benchmarks | | **%.1f** | | **%s** |" % (
        statistics.median(per_pc), "%.1f" % statistics.median(per_cmp) if per_cmp else "-"))
    return L


if __name__ == "__main__":
    main()
