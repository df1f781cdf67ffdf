#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The titles syzkaller gives the x86-64 oopses and warnings in a console
log, by the rules of its report parser (google/syzkaller pkg/report,
linux.go and report.go, as of 2023-07) for what a fault or a WARN in
translated code raises: a NULL pointer dereference, a bad paging request,
a general protection fault, a WARNING.  Used by tests/guest/oops-names.sh,
so that ./kjit-lab test checks what a fuzzer would name a crash found
under kjit without syzkaller itself (tests/syzkaller/ runs the real
parser and compares).

  oops_title.py CONSOLE_LOG
      per report, in log order: "TITLE: <title>" and "CORRUPTED: true" or
      "CORRUPTED: false"; exit 1 when the log has no report.

The rules, as syzkaller applies them:
- Every console line ("[  1.234] ...", taken without that prefix) that
  holds an oops header starts a report, which ends before the next one.
  Lines with a " ? " frame (the unwinder's guesses) are dropped.
- Oops: the frames are the first line matching the RIP pattern
  ("IP: [0010:]FUNC+"), then, after the next "Call Trace:", each line that
  starts with "[spaces]FUNC+" (or "FUNC."), until a line that starts
  another trace.  The RIP line is taken even when its function is skipped;
  a symbol that is no identifier (the code cache's) does not match it, so
  the parser reads on to the next line that does.
- WARNING "... at FILE:LINE FUNC+...": the RIP line's frame, then frame
  lines up to "Call Trace:"; if that gives none, the frames after
  "Call Trace:".
- A frame whose name matches a skip pattern is left out (here the subset
  of syzkaller's list that these paths show), syscall prefixes are
  stripped, and the title names the first frame left ("corrupted" if none).
- Corrupted: no frame, or a "Call Trace" (first of its kind) with no frame
  line in the 15 lines after it.
It models what decides these titles for kjit, not every report: four
formats, part of the skip list, no per-task (printk caller) filtering;
another report prints "TITLE: (not modelled) <its first line>".
tests/syzkaller/report-titles.sh checks that it agrees with the real parser.
"""
import re
import sys

PC = r"\[\<?(?:0x)?[0-9a-f]+\>?\]"
FUNC = r"([a-zA-Z0-9_]+)(?:\.|\+)"
SRC = r"([a-zA-Z0-9-_/.]+\.[a-z]+:[0-9]+)"
RIP_FRAME = re.compile(
    r"(?:IP|NIP|pc |PC is at):? (?:(?:[0-9]+:)?(?:" + PC + r" +){0,2}" + FUNC +
    r"|(?:[0-9]+:)?0x[0-9a-f]+)")
CALL_TRACE = re.compile(r"Call (?:T|t)race:")
FRAME = re.compile(r"^ *(?:" + PC + r" ){0,2}" + FUNC)
STACK_STARTS = [re.compile(r) for r in (r"Call (?:T|t)race", r"Allocated:", r"Freed:",
                                         r"[^k] backtrace:", r"Backtrace:")]
CONSOLE = re.compile(r"^(?:<[0-9]+>)?\[ *[0-9]+\.[0-9]+\](?:\[ *[CT][0-9]+\])? ")
QUESTIONABLE = re.compile(r"(?:\[<[0-9a-f]+>\])? \? ")
HEADERS = ("BUG:", "WARNING:", "general protection fault", "divide error:",
           "invalid opcode:", "kernel BUG", "Kernel panic", "stack segment: ",
           "Unable to handle kernel", "PANIC: double fault", "UBSAN:")
NOT_A_NEW_REPORT = re.compile(r"invalid opcode: 0000|Kernel panic - not syncing|PANIC: double fault")
OOPS, WARNING = "oops", "warning"
FORMATS = (
    (re.compile(r"BUG: (?:unable to handle kernel paging request|"
                r"unable to handle page fault for address)"),
     "BUG: unable to handle kernel paging request in {}", OOPS),
    (re.compile(r"BUG: (?:unable to handle kernel NULL pointer dereference|"
                r"kernel NULL pointer dereference)"),
     "BUG: unable to handle kernel NULL pointer dereference in {}", OOPS),
    (re.compile(r"general protection fault.*:"), "general protection fault in {}", OOPS),
    (re.compile(r"WARNING: .* at " + SRC + " " + FUNC), "WARNING in {}", WARNING),
)
SKIP = re.compile("|".join((
    "__sanitizer", "kasan", "panic", "invalid_op", "report_bug", "fixup_bug",
    "do_error", r"_trap$|do_trap", "show_stack", "dump_stack", "walk_stack",
    "dump_backtrace", "warn_slowpath", "__warn", "printk", "_indirect_thunk_",
    "print_tainted")))
STRIP_PREFIXES = ("__x64_", "__ia32_", "__do_sys_", "__se_", "____sys_",
                  "___sys_", "__sys_", "ksys_", "sys_")


def reports(log):
    """Each report's lines, from its header line to before the next."""
    out = []
    for raw in log.splitlines():
        prefix = CONSOLE.match(raw)
        if not prefix:
            continue
        line = raw[prefix.end():]
        if any(h in line for h in HEADERS) and not (out and NOT_A_NEW_REPORT.search(line)):
            out.append([])
        if out and ("<EOI>" in line or not QUESTIONABLE.search(line)):
            out[-1].append(line)
    return out


def frame_name(match):
    name = match.group(1) if match and match.lastindex else None
    if name is None or SKIP.search(name):
        return None
    for p in STRIP_PREFIXES:
        if name.startswith(p):
            name = name[len(p):]
    return name


def starts_stack(line):
    return any(r.search(line) for r in STACK_STARTS)


def trace_frames(lines):
    """Frame lines until another trace starts."""
    frames = []
    for line in lines:
        if starts_stack(line):
            break
        frames.append(frame_name(FRAME.match(line)))
    return frames


def first_index(lines, pattern, start=0):
    return next((i for i in range(start, len(lines)) if pattern.search(lines[i])), len(lines))


def oops_frames(lines):
    rip = first_index(lines, RIP_FRAME)
    frames = [frame_name(RIP_FRAME.search(lines[rip]))] if rip < len(lines) else []
    trace = first_index(lines, CALL_TRACE, rip)
    return frames + trace_frames(lines[trace + 1:])


def warning_frames(lines):
    rip = first_index(lines, RIP_FRAME)
    frames = []
    if rip < len(lines):
        frames = [frame_name(RIP_FRAME.search(lines[rip]))] + trace_frames(lines[rip + 1:])
    if any(frames):
        return frames
    return trace_frames(lines[first_index(lines, CALL_TRACE) + 1:])


def corrupted_trace(lines):
    """After the first line each stack-start pattern matches."""
    for start in STACK_STARTS:
        first = first_index(lines, start)
        if first == len(lines):
            continue
        framed = False
        for after in lines[first + 1:first + 16]:
            if starts_stack(after):
                break
            if FRAME.match(after):
                framed = True
                break
        if not framed:
            return True
    return False


def title(lines):
    text = "\n".join(lines)
    found = [(f.search(text).start(), fmt, kind) for f, fmt, kind in FORMATS if f.search(text)]
    if not found:
        return "(not modelled) " + lines[0], False
    _, fmt, kind = min(found, key=lambda x: x[0])
    frames = [f for f in (oops_frames if kind == OOPS else warning_frames)(lines) if f]
    if not frames:
        return fmt.format("corrupted"), True
    return fmt.format(frames[0]), corrupted_trace(lines)


def main():
    found = reports(open(sys.argv[1], errors="replace").read())
    for lines in found:
        name, corrupted = title(lines)
        print("TITLE: " + name)
        print("CORRUPTED: " + ("true" if corrupted else "false"))
    if not found:
        print("no oops or warning in the log", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
