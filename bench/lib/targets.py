# SPDX-License-Identifier: GPL-2.0
"""The bench's targets and their verdicts (RESULTS.md, "Targets").

A target keeps the definition it was set with: its issue, its mode(s), and
which macro run it bounds.  Until the driver ran wrk twice after the flush,
the macro workload was one wrk run starting from an empty code cache: what
is now "macro-cold".  So the macro targets of issues 5 and 14 bound
macro-cold; issue 31 bounds cold and warm ("macro") separately.

A verdict reads only rows that may be judged (bench/lib/checks.py: the
boot finished, lmb, wrk and the kernel logs were clean, every micro
benchmark measured); otherwise it says why it is not judged.
A verdict compares only rows of one run: a target that reads more than one
configuration is not judged when their stamps name different runs, or when
a row has no stamp (its run cannot be told).  Issue 31's targets also ask
for one stamped run with at least 3 repetitions.  A target is superseded in
a mode when a later issue set a bound on the same figure there."""
import statistics

import checks
import stamps


def _geo(M, c):
    """The micro geomean of a row that measured every micro benchmark: a
    partial one leaves out what failed (lmb stops at its first failure)."""
    C = M.get(c)
    return C.get("micro_geomean") if C else None


def _macro(M, c, run):
    C = M.get(c)
    return C["ratios"].get(run, {}).get("ratio") if C else None


def _added_ratio(a, b):
    """(a - 1) / (b - 1): how many times more time a adds over native than b."""
    if a is None or b is None:
        return None
    return (a - 1) / (b - 1) if b > 1 else float("inf")


def _kcov_pc_per_block(M):
    k = M.get("kjit-kcov-pc", {}).get("kcov")
    per = [v["added_ns_per_op"] / v["entries_per_op"] for v in (k or {}).values() if v["entries_per_op"] > 0]
    return statistics.median(per) if per else None


def _capacity_flushes(M):
    # set on a 4 MiB cache, the default then: kjit-cache4096 keeps that size
    mem = M.get("kjit-cache4096", {}).get("memory", {})
    if "flushes" not in mem.get("macro", {}) or "flushes" not in mem.get("micro", {}):
        return None
    # cumulative counter; minus the bench's own flush between micro and macro
    return mem["macro"]["flushes"] - mem["micro"]["flushes"] - 1


def fmt(x):
    return "%.2f" % x if isinstance(x, (int, float)) else "n/a"


def T(issue, modes, text, configs, measure, ok, figure=None, show=None, one_stamped_run=False):
    return {"issue": issue, "modes": modes, "text": text, "configs": configs, "measure": measure,
            "ok": ok, "figure": figure, "show": show or (lambda M, v: fmt(v)),
            "one_stamped_run": one_stamped_run}


BOTH, ICOUNT = ("tcg", "icount"), ("icount",)


def _micro(issue, modes, what, cfg, bound, **kw):
    return T(issue, modes, "%s micro geomean <= %s" % (what, "%g" % bound if bound == int(bound) else "%.2f" % bound), [cfg],
             lambda M: _geo(M, cfg), lambda v: v <= bound, figure=("micro", cfg), **kw)


def _mac(issue, modes, what, cfg, run, bound, text, **kw):
    return T(issue, modes, "%s %s" % (what, text), [cfg],
             lambda M: _macro(M, cfg, run), lambda v: v <= bound, figure=(run, cfg), **kw)


def _issue31():
    kw = {"one_stamped_run": True}
    return [
        _micro(31, ICOUNT, "no tool", "kjit-none", 1.05, **kw),
        _mac(31, ICOUNT, "no tool", "kjit-none", "macro", 1.03, "macro warm (from the cache) <= 1.03", **kw),
        _mac(31, ICOUNT, "no tool", "kjit-none", "macro-cold", 1.08, "macro cold (building the cache) <= 1.08", **kw),
        _micro(31, ICOUNT, "block counting", "kjit-bbcount", 1.12, **kw),
        _mac(31, ICOUNT, "block counting", "kjit-bbcount", "macro", 1.10, "macro warm <= 1.10", **kw),
        _mac(31, ICOUNT, "block counting", "kjit-bbcount", "macro-cold", 1.18, "macro cold <= 1.18", **kw),
        _micro(31, ICOUNT, "call tracing", "kjit-calltrace", 1.15, **kw),
        _mac(31, ICOUNT, "call tracing", "kjit-calltrace", "macro", 1.12, "macro warm <= 1.12", **kw),
        T(31, ICOUNT, "KCOV trace-PC: guest instructions added per block <= 25 (median over benchmarks, KCOV table)",
          ["kjit-kcov-pc"], _kcov_pc_per_block, lambda v: v <= 25, figure=("kcov-pc", "kjit-kcov-pc"),
          show=lambda M, v: "%.1f" % v if v is not None else "n/a", **kw),
        _micro(31, ICOUNT, "kcov-beside (a process beside a covered one)", "kjit-kcov-beside", 1.02, **kw),
        _mac(31, ICOUNT, "kcov-beside", "kjit-kcov-beside", "macro", 1.01, "macro warm <= 1.01", **kw),
    ]


def _issue14():
    cold = "macro cold <= %s (set on the one wrk run after the flush, which built the cache)"
    return [
        _micro(14, ICOUNT, "fast path: no instrumentation", "kjit-none", 1.12),
        _mac(14, ICOUNT, "fast path: no instrumentation", "kjit-none", "macro-cold", 1.10, cold % "1.10"),
        _micro(14, ICOUNT, "fast path: block counting", "kjit-bbcount", 1.30),
        _mac(14, ICOUNT, "fast path: block counting", "kjit-bbcount", "macro-cold", 1.20, cold % "1.20"),
        T(14, ICOUNT, "fast path: call tracing adds <= 1/3 of kprobes-per-function's time (added kjit / added kprobes, micro geomean)",
          ["kjit-calltrace", "kprobe-call"], lambda M: _added_ratio(_geo(M, "kjit-calltrace"), _geo(M, "kprobe-call")),
          lambda v: v <= 1 / 3),
        T(14, ICOUNT, "fast path: block counting adds >= 100x less than kprobes per block (added kprobes / added kjit)",
          ["kprobe-bb", "kjit-bbcount"], lambda M: _added_ratio(_geo(M, "kprobe-bb"), _geo(M, "kjit-bbcount")),
          lambda v: v >= 100),
    ]


def _time_and_added(a, b):
    """measure: time ratio a / b (micro geomean); show: with the added-time ratio in brackets"""
    def measure(M):
        x, y = _geo(M, a), _geo(M, b)
        return x / y if x and y else None

    def show(M, v):
        return "%s [%s]" % (fmt(v), fmt(_added_ratio(_geo(M, a), _geo(M, b))))
    return measure, show


def _issue5():
    cold = "macro cold within %s (set on the one wrk run after the flush, which built the cache)"
    bb_m, bb_s = _time_and_added("kprobe-bb", "kjit-bbcount")
    ct_m, ct_s = _time_and_added("kprobe-call", "kjit-calltrace")
    return [
        _micro(5, BOTH, "no instrumentation", "kjit-none", 1.25),
        _mac(5, BOTH, "no instrumentation", "kjit-none", "macro-cold", 1.02, cold % "2%"),
        _micro(5, BOTH, "block counting", "kjit-bbcount", 2),
        _mac(5, BOTH, "block counting", "kjit-bbcount", "macro-cold", 1.10, cold % "10%"),
        T(5, BOTH, "block counting >= 50x faster than kprobes (time kprobe-bb / kjit-bbcount, micro geomean; added-time ratio in brackets)",
          ["kprobe-bb", "kjit-bbcount"], bb_m, lambda v: v >= 50, show=bb_s),
        T(5, BOTH, "call tracing >= 10x faster than kprobes (time kprobe-call / kjit-calltrace, micro geomean; added-time ratio in brackets)",
          ["kprobe-call", "kjit-calltrace"], ct_m, lambda v: v >= 10, show=ct_s),
        T(5, BOTH, "call tracing no slower than ftrace's function tracer (kjit / ftrace, micro geomean)",
          ["kjit-calltrace", "ftrace-func"],
          lambda M: _geo(M, "kjit-calltrace") / _geo(M, "ftrace-func") if _geo(M, "kjit-calltrace") and _geo(M, "ftrace-func") else None,
          lambda v: v <= 1.0),
        T(5, BOTH, "liveness+inlining cut block-counting overhead >= 2.6x ((noopt-1)/(bbcount-1), micro geomean)",
          ["kjit-bb-noopt", "kjit-bbcount"], lambda M: _added_ratio(_geo(M, "kjit-bb-noopt"), _geo(M, "kjit-bbcount")),
          lambda v: v >= 2.6),
        T(5, BOTH, "macro runs without a capacity flush in 4 MiB of code cache (block counting)",
          ["kjit-cache4096"], _capacity_flushes, lambda v: v == 0,
          show=lambda M, v: "capacity flushes=%s" % (v if v is not None else "n/a")),
    ]


def _switching_flushes(M):
    """Full flushes (the engine's flushes, which count those for text
    changes as well, less those of the load and the bench's own between
    micro and macro) per 100 on/off switches of the function tracer, from
    kjit's load to the end of the warm macro run."""
    mem = M.get("kjit-bb-switching", {}).get("memory", {}).get("macro", {})
    if not all(k in mem for k in ("flushes", "load_flushes", "switches")) or mem["switches"] <= 0:
        return None
    return 100.0 * (mem["flushes"] - mem["load_flushes"] - 1) / mem["switches"]


def _show_switching(M, v):
    mem = M.get("kjit-bb-switching", {}).get("memory", {}).get("macro", {})
    if v is None:
        return "n/a"
    return "%.2f per 100 switches (%d switches; blocks retired per switch %.1f, in %.1f traces; blocks built %d)" % (
        v, mem["switches"], mem.get("blocks_retired", 0) / mem["switches"],
        mem.get("traces_retired", 0) / mem["switches"], mem.get("blocks_built", 0))


def _issue64():
    kw = {"one_stamped_run": True}
    return [
        _mac(64, ICOUNT, "block counting beside a busy tracer", "kjit-bb-switching", "macro", 1.20,
             "macro warm <= 1.20", **kw),
        T(64, ICOUNT, "no full flush while the function tracer is switched on and off (per 100 switches)",
          ["kjit-bb-switching"], _switching_flushes, lambda v: v == 0, show=_show_switching, **kw),
    ]


TARGETS = _issue31() + _issue14() + _issue5() + _issue64()


def superseded_by(t, mode):
    """The later target that bounds t's figure in this mode, or None."""
    if t["figure"] is None:
        return None
    later = [u for u in TARGETS if mode in u["modes"] and u["figure"] == t["figure"] and u["issue"] > t["issue"]]
    return max(later, key=lambda u: u["issue"]) if later else None


def _min_reps(rows):
    ns = [r["n"] for C in rows for r in C.get("ratios", {}).values()]
    return min(ns) if ns else 0


def _refused(t, rows):
    """The verdict of a target whose rows cannot be judged (bench/lib/checks.py),
    or None: a partial row leads, as "partial n/12, not judged"."""
    name = (lambda c: c + ": ") if len(rows) > 1 else (lambda c: "")
    parts = [name(c) + p for c, C in zip(t["configs"], rows) for p in [checks.partial(C)] if p]
    why = [name(c) + r for c, C in zip(t["configs"], rows) for r in checks.reasons(C)]
    if parts:
        return "%s, not judged%s" % ("; ".join(parts), " (%s)" % checks.brief(why) if why else "")
    return "not judged (%s)" % checks.brief(why) if why else None


def judge(t, M):
    """(measured text, verdict, run cell) of target t over the rows M of one mode."""
    rows = [M.get(c) for c in t["configs"]]
    if not all(rows):
        return t["show"](M, None), "n/a (not measured)", "-"
    v = t["measure"](M)
    shown = t["show"](M, v)
    runs = {stamps.run_of(C) for C in rows}
    if len(runs) == 1 and None not in runs:
        run = stamps.row_label(rows[0])
    elif runs == {None}:
        run = stamps.UNSTAMPED
    else:
        run = "; ".join("%s: %s" % (c, stamps.row_label(C)) for c, C in zip(t["configs"], rows))
    refused = _refused(t, rows)
    if refused:
        return shown, refused, run
    if v is None:
        return shown, "n/a (not measured)", "-"
    if len(runs) > 1:
        return shown, "not judged (rows from different runs)", run
    if None in runs and len(rows) > 1:
        return shown, "not judged (unstamped rows: their runs cannot be told apart)", run
    if t["one_stamped_run"] and None in runs:
        return shown, "not judged (unstamped: the target asks for one stamped run)", run
    if t["one_stamped_run"] and _min_reps(rows) < 3:
        return shown, "not judged (%d repetitions: the target asks for at least 3)" % _min_reps(rows), run
    return shown, "met" if t["ok"](v) else "**missed**", run


def table(M, mode):
    """The "Targets" section of one mode, as markdown lines."""
    out = ["### Targets (%s)" % mode, "",
           "Each target keeps the definition it was set with (issue, mode, which macro run). A verdict compares rows "
           "of one run only. `-` in run: nothing measured.", "",
           "| set by | target | measured | verdict | run |", "|---|---|---|---|---|"]
    gone = []
    for t in TARGETS:
        if mode not in t["modes"]:
            continue
        by = superseded_by(t, mode)
        if by:
            gone.append("- issue %d: %s (by issue %d: %s)" % (t["issue"], t["text"], by["issue"], by["text"]))
            continue
        shown, verdict, run = judge(t, M)
        out.append("| issue %d | %s | %s | %s | %s |" % (t["issue"], t["text"], shown, verdict, run))
    if gone:
        out += ["", "Superseded here (a later issue bounds the same figure; not judged):", ""] + gone
    if mode != "icount":
        out += ["", "Issues 14 and 31 set their targets in -icount: they are judged in the -icount section."]
    return out + [""]
