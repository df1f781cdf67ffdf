# SPDX-License-Identifier: GPL-2.0
"""What keeps a row of bench/results from being judged.

A row is judged only when its boot finished (the driver wrote status ok),
boot.sh exited 0, every lmb run exited 0 (lmb stops at its first failure,
and fork and exec come last), wrk reported no errors, the kernel logs (the
boot's console.log and the guest's dmesg.txt) are clean by the lab's
checker (tools/lab/kernel-log-errors.sh), and every micro benchmark has a
ratio.  analyze.py runs the checks on a boot's files and keeps the failed
ones in the row ("refused"); a row without that list was measured before
the bench checked, so nothing says it is clean and it is not judged."""
import os
import subprocess

from configs import MICRO

LOG_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "lab",
                         "kernel-log-errors.sh")
NOT_CHECKED = "not checked (measured before the bench checked lmb's exit, wrk's errors and the kernel log)"


def boot_status(od, rc):
    """The driver's status, or what boot.sh's exit status says of a boot
    whose driver wrote none (it did not get to its end)."""
    try:
        st = open(os.path.join(od, "status")).read().strip()
    except OSError:
        st = ""
    if st:
        return st
    if rc == "124":
        return "boot timed out at BENCH_TIMEOUT, wall clock"
    if rc == "125":
        return "boot failed: no done file (a crash or a hang)"
    return "boot failed: no status from the driver, boot rc %s" % rc


def rep_problems(path):
    """Why one lmb + wrk output file is not clean: lmb's exit status not 0
    or not recorded, wrk's error lines (socket errors and timeouts, non-2xx
    responses, its own failure)."""
    try:
        lines = [l.split() for l in open(path)]
    except OSError:
        return ["no output"]
    out = []
    exits = [f[1] for f in lines if len(f) == 2 and f[0] == "lmb-exit"]
    if not exits:
        out.append("lmb exit status not recorded")
    elif exits[-1] != "0":
        said = [" ".join(f) for f in lines if f and f[0] == "lmb:"]
        out.append("lmb exited %s%s" % (exits[-1], " (%s)" % said[0] if said else ""))
    return out + ["wrk " + " ".join(f[2:]) for f in lines
                  if len(f) > 2 and f[0] in ("macro", "macro-cold") and f[1] == "errors"]


def runs_problems(od, reps):
    """rep_problems of every repetition's native and configuration runs,
    one line per problem and side: "config reps 1,2: lmb exited 1"."""
    seen = {}
    for side in ("native", "config"):
        for i in reps:
            for p in rep_problems(os.path.join(od, "rep%d-%s.txt" % (i, side))):
                seen.setdefault((side, p), []).append(str(i))
    return ["%s rep%s %s: %s" % (side, "s" if len(ns) > 1 else "", ",".join(ns), p) for (side, p), ns in seen.items()]


def log_errors(path):
    """The error lines the lab's checker finds in a kernel log; a log it
    cannot read is one.  A checker that fails stops the analysis: its
    silence must not pass for a clean log."""
    p = subprocess.run(["sh", LOG_CHECK, path], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit("analyze: %s failed (%d): %s" % (LOG_CHECK, p.returncode, p.stderr.strip()))
    name = os.path.basename(path)
    return [l.replace(path, name) for l in p.stdout.splitlines()] if p.returncode == 0 else []


def refusals(share, od, reps, rc):
    """Every check a boot (run directory `share`, driver output `od`, the
    repetitions `reps` it started) failed."""
    out = [] if rc == "0" else ["boot rc %s" % rc]
    out += runs_problems(od, reps)
    for path in (os.path.join(share, "console.log"), os.path.join(od, "dmesg.txt")):
        bad = log_errors(path)
        if bad:
            more = " (+%d lines)" % (len(bad) - 1) if len(bad) > 1 else ""
            out.append("kernel log %s: %s%s" % (os.path.basename(path), bad[0].strip(), more))
    # the reasons go into markdown table cells
    return [r.replace("|", "/") for r in out]


def reasons(row):
    """Why the row is not judged: its boot's status when it did not finish,
    else the checks it failed; [] when it may be judged."""
    if row.get("status") != "ok":
        return [row.get("status") or "no status"]
    if "refused" not in row:
        return [NOT_CHECKED]
    return row["refused"]


def micro_done(row):
    return sum(1 for b in MICRO if b in row.get("ratios", {}))


def partial(row):
    """"partial n/12" for a finished row that lacks micro benchmarks, else None."""
    n = micro_done(row)
    return "partial %d/%d" % (n, len(MICRO)) if row.get("status") == "ok" and n < len(MICRO) else None


def brief(rs):
    """Reasons as one short clause: the first two and how many more."""
    more = " and %d more" % (len(rs) - 2) if len(rs) > 2 else ""
    return "; ".join(rs[:2]) + more


def mark(row):
    """The mark a table's run cell carries for a row that is not judged."""
    rs = reasons(row)
    if not rs:
        return ""
    return " **(%s)**" % (rs[0] if row.get("status") != "ok" else "not judged: " + brief(rs))
