# SPDX-License-Identifier: GPL-2.0
"""The stamp of the run that measured a row of bench/results.

bench/run.sh writes RUNS/MODE/CONFIG/stamp.json before it boots the
configuration: {"run": start of the bench/run.sh invocation (UTC, ISO 8601;
it names the run), "commit": `git rev-parse --short HEAD`, "dirty": the tree
had changes, "date": when this configuration's boot started (UTC), "mode",
"reps", "secs", "macro_secs", "smp", "kjit_ko_sha256"}.  A row measured
before run.sh wrote stamps has the string UNSTAMPED instead: no stamp is
made up for it.  Rows belong to one run when their "run" is the same."""
import checks

UNSTAMPED = "unstamped (before stamps)"
MODE_NAMES = {"tcg": "TCG wall clock", "icount": "-icount"}


def is_stamped(stamp):
    return isinstance(stamp, dict) and bool(stamp.get("run"))


def run_of(row):
    """The run id of a summary row, or None when it has no stamp."""
    s = row.get("stamp") if row else None
    return s["run"] if is_stamped(s) else None


def newest_run(modes):
    """The latest run id among the rows of every mode (ISO dates sort)."""
    runs = [run_of(C) for M in modes.values() for C in M.values()]
    runs = [r for r in runs if r]
    return max(runs) if runs else None


def label(stamp, done=None):
    """The stamp as a table shows it: `COMMIT`[+dirty], run DATE TIMEZ, MODE,
    N reps, or "D of N reps" when the boot finished D of its N repetitions."""
    if not is_stamped(stamp):
        return UNSTAMPED
    run = stamp["run"].replace("T", " ")[:16] + "Z"
    planned = stamp.get("reps", "?")
    reps = "%s reps" % planned if done is None or str(done) == str(planned) else "%s of %s reps" % (done, planned)
    return "`%s`%s, run %s, %s, %s" % (
        stamp.get("commit", "?"), "+dirty" if stamp.get("dirty") else "", run,
        MODE_NAMES.get(stamp.get("mode"), stamp.get("mode", "?")), reps)


def row_label(row):
    """The label of a summary row's stamp with the repetitions it completed."""
    return label(row.get("stamp"), row.get("reps_done"))


def status(row, newest):
    """How a row stands against the newest run: 'newest run', 'older run' or
    UNSTAMPED."""
    r = run_of(row)
    if r is None:
        return UNSTAMPED
    return "newest run" if r == newest else "older run"


def cell(row, newest):
    """The "run" cell of a RESULTS.md row: the stamp, marked when it is not
    the newest run's, and when the row is not judged (bench/lib/checks.py)."""
    r = run_of(row)
    if r is None:
        return UNSTAMPED + checks.mark(row)
    return row_label(row) + ("" if r == newest else " **(older run)**") + checks.mark(row)
