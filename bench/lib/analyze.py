#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench runs into bench/results/{summary.json,RESULTS.md} and gnuplot
scripts (bench/run.sh runs gnuplot on them).
Usage: analyze.py RUNS_DIR RESULTS_DIR [ELAPSED_SECONDS]
RUNS_DIR/MODE/CONFIG/out/CONFIG/repN-{native,config}.txt hold `lmb NAME iters N
ns T tsc C ns_per_op X` lines and `macro rps R`; repN-stats-{micro,macro}.txt
hold kjitctl stats ("key value") or kprobench stats.
Ratio = configuration time per operation / native time per operation in the
same boot and repetition (macro: native requests/s / configuration
requests/s); reported: median over repetitions, with min and max."""
import json, math, os, statistics, sys

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
    r = {}
    try:
        for line in open(path):
            f = line.split()
            if len(f) >= 10 and f[0] == "lmb":
                r[f[1]] = float(f[9])
            elif len(f) == 3 and f[0] in ("macro", "macro-cold") and f[1] == "rps":
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


def main():
    runs, res = sys.argv[1], sys.argv[2]
    elapsed = sys.argv[3] if len(sys.argv) > 3 else "?"
    os.makedirs(res, exist_ok=True)
    summary = {"method": {
        "ratio": "time per operation with the configuration / native, same boot and repetition; median over repetitions",
        "macro": "nginx-light serving a 1 KiB file to wrk (-t1 -c4) over loopback in the guest; ratio = native req/s / config req/s; kjit's cache is flushed before, and wrk runs twice: macro-cold is the first run (it pays for building the cache), macro the second (from the cache the first built); native runs twice as well",
        "icount_caveat": "-icount counts guest instructions: it does not charge the hardware cost of int3 traps (kprobes) or of TCG's own work, so it flatters kprobes",
    }, "modes": {}}
    # A mode or configuration not measured by this run (BENCH_MODES=tcg,
    # BENCH_CONFIGS=...) keeps the figures of the last run that measured it,
    # so one mode or a few configurations can be refreshed alone.
    try:
        previous = json.load(open(os.path.join(res, "summary.json"))).get("modes", {})
    except (OSError, ValueError):
        previous = {}
    for mode in MODES:
        mdir = os.path.join(runs, mode)
        if not os.path.isdir(mdir):
            if mode in previous:
                summary["modes"][mode] = previous[mode]
            continue
        M = summary["modes"][mode] = {}
        for cfg in CONFIGS:
            od = os.path.join(mdir, cfg, "out", cfg)
            if not os.path.isdir(od):
                # Not in this run (BENCH_CONFIGS chose others): keep the
                # figures of the last run that measured it.
                if cfg in previous.get(mode, {}):
                    M[cfg] = previous[mode][cfg]
                continue
            status = open(os.path.join(od, "status")).read().strip() if os.path.exists(os.path.join(od, "status")) else "crashed"
            try:
                rc = open(os.path.join(mdir, cfg, "boot.rc")).read().strip()
            except OSError:
                rc = "?"
            if status == "crashed" and rc == "124":
                status = "boot timeout (per-boot limit; host shared with other guests)"
            C = M[cfg] = {"status": status, "boot_rc": rc, "ratios": {}, "memory": {}}
            reps = sorted(int(f[3:-11]) for f in os.listdir(od) if f.startswith("rep") and f.endswith("-native.txt"))
            per, kc = {}, {}
            for i in reps:
                n = parse(os.path.join(od, f"rep{i}-native.txt"))
                c = parse(os.path.join(od, f"rep{i}-config.txt"))
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
    json.dump(summary, open(os.path.join(res, "summary.json"), "w"), indent=1, sort_keys=True)

    # ---- RESULTS.md
    L = ["# kjit bench results", "",
         "Generated by `bench/run.sh BUILD_DIR` (`./kjit-lab bench`) in %s s. Every figure is a **ratio to native "
         "measured in the same boot** (time per operation; macro: native requests/s over configuration requests/s), "
         "median over the repetitions, [min-max] when there are several. Guest: the pinned Debian 6.1 cloud kernel "
         "under QEMU TCG, one vCPU, KASLR on; Debian bookworm root (debootstrap minbase + nginx-light, wrk, bpftrace)." % elapsed,
         "", "Micro: `bench/micro/lmb.c` (lmbench-style). Macro: nginx-light serving a 1 KiB file to wrk over loopback.",
         "kjit attaches the `__x64_sys_*` wrappers the workloads use (`bench/guest/driver.sh`, SYSCALLS).", ""]
    for mode, mname in MODES.items():
        if mode not in summary["modes"]:
            continue
        M = summary["modes"][mode]
        L += ["## Mode: %s" % mname, ""]
        if mode == "icount":
            L += ["> -icount counts guest instructions: it does **not** charge the hardware cost of the int3 traps "
                  "that kprobes take (nor TCG's own cost of self-modifying code), so it flatters kprobes.", ""]
        cols = MICRO + ["geomean", "macro", "macro-cold"]
        L += ["| configuration | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        for cfg in CONFIGS:
            if cfg not in M:
                continue
            C = M[cfg]
            if C["status"] != "ok" and not C["ratios"]:
                L.append("| %s | %s |" % (cfg, ("not measured: " + C["status"] + " (" + "; ".join(C.get("notes", [])[-2:]) + ")").replace("|", "/")) + " |" * (len(cols) - 1))
                continue
            row = []
            for b in cols:
                if b == "geomean":
                    g = C.get("micro_geomean") or C.get("micro_geomean_partial")
                    row.append("**%.2f**" % g if g else "-")
                    continue
                r = C["ratios"].get(b)
                if not r:
                    row.append("-")
                elif r["n"] > 1:
                    row.append("%.2f [%.2f-%.2f]" % (r["ratio"], r["min"], r["max"]))
                else:
                    row.append("%.2f" % r["ratio"])
            L.append("| %s | " % cfg + " | ".join(row) + " |")
        L += ["", "Memory (kjitctl stats after each workload; the cache is flushed between micro and macro; kprobes: probes registered/failed):", "",
              "| configuration | micro cache B | micro arena B | macro cache B | macro arena B | flushes (micro/macro) | probes |", "|---|---|---|---|---|---|---|"]
        for cfg in CONFIGS:
            C = M.get(cfg)
            if not C or not C["memory"]:
                continue
            mi, ma = C["memory"].get("micro", {}), C["memory"].get("macro", {})
            probes = "%s/%s" % (mi.get("registered", "-"), mi.get("failed", "-")) if "registered" in mi else "-"
            L.append("| %s | %s | %s | %s | %s | %s/%s | %s |" % (cfg, mi.get("cache_bytes_used", "-"), mi.get("arena_bytes_used", "-"),
                     ma.get("cache_bytes_used", "-"), ma.get("arena_bytes_used", "-"), mi.get("flushes", "-"), ma.get("flushes", "-"), probes))
        rows = [(cfg, M[cfg]["completion"]) for cfg in CONFIGS if M.get(cfg, {}).get("completion")]
        if rows:
            L += ["", "Completion (kjitctl stats after each workload: entries followed to their return or their "
                  "task's exit in the cache, of the entries that ended; kjitctl's own calls left out):", "",
                  "| configuration | micro | micro entries | macro | macro entries | sleeps followed (micro/macro) |",
                  "|---|---|---|---|---|---|"]
            for cfg, c in rows:
                mi, ma = c.get("micro", {}), c.get("macro", {})
                L.append("| %s | %s%% | %s | %s%% | %s | %s/%s |" % (cfg, mi.get("percent", "-"), mi.get("ended", "-"),
                         ma.get("percent", "-"), ma.get("ended", "-"), mi.get("sleeps_followed", "-"),
                         ma.get("sleeps_followed", "-")))
        L += kcov_table(M, mode)
        L += ["", "![overview %s](overview-%s.svg)" % (mode, mode), ""]
        L += targets(M, mode)
    L += ["", "Configurations:", ""] + ["- `%s`: %s" % (c, DESC[c]) for c in CONFIGS]
    open(os.path.join(res, "RESULTS.md"), "w").write("\n".join(L) + "\n")

    # ---- plots
    for mode in summary["modes"]:
        M = summary["modes"][mode]
        dat = os.path.join(res, "overview-%s.dat" % mode)
        with open(dat, "w") as f:
            f.write("config micro_geomean macro\n")
            for cfg in CONFIGS:
                C = M.get(cfg)
                if not C or not C["ratios"]:
                    continue
                g = C.get("micro_geomean") or C.get("micro_geomean_partial") or "NaN"
                m = C["ratios"].get("macro", {}).get("ratio", "NaN")
                f.write("%s %s %s\n" % (cfg, g, m))
        with open(os.path.join(res, "overview-%s.gp" % mode), "w") as f:
            f.write('set terminal svg size 1000,500 dynamic\nset output "overview-%s.svg"\n' % mode)
            f.write('set title "kjit vs probes: slowdown vs native, same boot (%s)"\n' % MODES[mode])
            f.write('set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n')
            f.write('set logscale y\nset yrange [0.5:*]\nset ylabel "ratio to native (log)"\nset grid ytics\n')
            f.write('set xtics rotate by -40 noenhanced\nset key top left\n')
            f.write('plot "overview-%s.dat" using 2:xtic(1) title "micro geomean", "" using 3 title "macro (nginx+wrk)", 1 notitle lc rgb "black"\n' % mode)
    print("analyze: wrote", os.path.join(res, "RESULTS.md"))


def kcov_table(M, mode):
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


def targets(M, mode):
    def g(c):
        C = M.get(c)
        return (C.get("micro_geomean") or C.get("micro_geomean_partial")) if C else None

    def m(c, run="macro"):
        C = M.get(c)
        return C["ratios"].get(run, {}).get("ratio") if C else None

    def fmt(x):
        return "%.2f" % x if isinstance(x, (int, float)) else "n/a"

    def chk(ok):
        return "n/a" if ok is None else ("met" if ok else "**missed**")

    def both(a, b, f):
        return None if a is None or b is None else f(a, b)
    out = ["### Targets (%s)" % mode, "", "| target | measured | verdict |", "|---|---|---|"]
    out.append("| no instrumentation <= 1.25x (micro geomean) | %s | %s |" % (fmt(g("kjit-none")), chk(both(g("kjit-none"), 0, lambda a, b: a <= 1.25))))
    out.append("| no instrumentation macro within 2%% | %s | %s |" % (fmt(m("kjit-none")), chk(both(m("kjit-none"), 0, lambda a, b: a <= 1.02))))
    out.append("| block counting <= 2x (micro geomean) | %s | %s |" % (fmt(g("kjit-bbcount")), chk(both(g("kjit-bbcount"), 0, lambda a, b: a <= 2))))
    out.append("| block counting macro within 10%% | %s | %s |" % (fmt(m("kjit-bbcount")), chk(both(m("kjit-bbcount"), 0, lambda a, b: a <= 1.10))))
    # Verdicts use the stricter time ratio; the overhead ratio (time added
    # over native, kprobes / kjit) is shown beside it.
    def over(a, b):
        return both(a, b, lambda x, y: (x - 1) / (y - 1) if y > 1 else float("inf"))
    r = both(g("kprobe-bb"), g("kjit-bbcount"), lambda a, b: a / b)
    out.append("| block counting >= 50x faster than kprobes (time kprobe-bb / kjit-bbcount, micro geomean; overhead ratio in brackets) | %s [%s] | %s |" % (fmt(r), fmt(over(g("kprobe-bb"), g("kjit-bbcount"))), chk(both(r, 0, lambda a, b: a >= 50))))
    r = both(g("kprobe-call"), g("kjit-calltrace"), lambda a, b: a / b)
    out.append("| call tracing >= 10x faster than kprobes (time ratio, micro geomean; overhead ratio in brackets) | %s [%s] | %s |" % (fmt(r), fmt(over(g("kprobe-call"), g("kjit-calltrace"))), chk(both(r, 0, lambda a, b: a >= 10))))
    r = both(g("kjit-calltrace"), g("ftrace-func"), lambda a, b: a / b)
    out.append("| call tracing no slower than ftrace function tracer (kjit / ftrace) | %s | %s |" % (fmt(r), chk(both(r, 0, lambda a, b: a <= 1.0))))
    r = both(g("kjit-bb-noopt"), g("kjit-bbcount"), lambda a, b: (a - 1) / (b - 1) if b > 1 else float("inf"))
    out.append("| liveness+inlining cut block-counting overhead >= 2.6x ((noopt-1)/(bbcount-1)) | %s | %s |" % (fmt(r), chk(both(r, 0, lambda a, b: a >= 2.6))))
    # The fast path's targets (-icount): ratios, and added time against kprobes.
    out.append("| fast path: no instrumentation <= 1.12 (micro geomean) | %s | %s |" % (fmt(g("kjit-none")), chk(both(g("kjit-none"), 0, lambda a, b: a <= 1.12))))
    out.append("| fast path: no instrumentation macro <= 1.10 (from the cache; building it, macro-cold, in brackets) | %s [%s] | %s |" % (fmt(m("kjit-none")), fmt(m("kjit-none", "macro-cold")), chk(both(m("kjit-none"), 0, lambda a, b: a <= 1.10))))
    out.append("| fast path: block counting <= 1.30 (micro geomean) | %s | %s |" % (fmt(g("kjit-bbcount")), chk(both(g("kjit-bbcount"), 0, lambda a, b: a <= 1.30))))
    out.append("| fast path: block counting macro <= 1.20 (from the cache; building it, macro-cold, in brackets) | %s [%s] | %s |" % (fmt(m("kjit-bbcount")), fmt(m("kjit-bbcount", "macro-cold")), chk(both(m("kjit-bbcount"), 0, lambda a, b: a <= 1.20))))
    r = both(g("kjit-calltrace"), g("kprobe-call"), lambda a, b: (a - 1) / (b - 1) if b > 1 else float("inf"))
    out.append("| fast path: call tracing adds <= 1/3 of kprobes-per-function's time (added kjit / added kprobes) | %s | %s |" % (fmt(r), chk(both(r, 0, lambda a, b: a <= 1 / 3))))
    r = over(g("kprobe-bb"), g("kjit-bbcount"))
    out.append("| fast path: block counting adds >= 100x less than kprobes per block (added kprobes / added kjit) | %s | %s |" % (fmt(r), chk(both(r, 0, lambda a, b: a >= 100))))
    C = M.get("kjit-bbcount")
    fl = None
    if C and "flushes" in C["memory"].get("macro", {}) and "flushes" in C["memory"].get("micro", {}):
        # cumulative counter; minus the bench's own flush between micro and macro
        fl = C["memory"]["macro"]["flushes"] - C["memory"]["micro"]["flushes"] - 1
    out.append("| macro runs without a flush in 4 MiB of code cache (block counting) | capacity flushes=%s | %s |" % (fl if fl is not None else "n/a", chk(None if fl is None else fl == 0)))
    return out + [""]


if __name__ == "__main__":
    main()
