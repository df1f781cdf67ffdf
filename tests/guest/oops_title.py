#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The title syzkaller gives the first x86-64 oops in a console log, by the
rules of its report parser (google/syzkaller pkg/report/linux.go and
report.go, as of 2023-07) for the oopses a fault in translated code
raises: a NULL pointer dereference, a bad paging request, a general
protection fault.  Used by tests/guest/oops-names.sh, so that the guest
suite checks what a fuzzer would name a crash found under kjit, without
syzkaller itself (tests/syzkaller/ runs the real parser).

  oops_title.py CONSOLE_LOG
      prints "TITLE: <title>" and, when syzkaller would mark the report
      corrupted, "CORRUPTED: <reason>"; exit 1 when the log has no such oops.

The rules, as syzkaller applies them:
- The report starts at the first line holding an oops header and ends
  before the next one.  Only console lines ("[  1.234] ...") take part,
  without that prefix; lines with a " ? " frame (the unwinder's guesses)
  are dropped.
- Frames: the first line matching the RIP pattern ("IP: [0010:]FUNC+"),
  then, after the next "Call Trace:", each line that starts with
  "[spaces]FUNC+" or "FUNC.", until a line that starts another trace.  A
  frame whose name matches a skip pattern is left out (the subset of
  syzkaller's list that an oops path can show), syscall prefixes are
  stripped, and the title names the first frame left ("corrupted" if none).
- The RIP line is taken even when its function is skipped: a symbol that
  is no identifier (the code cache's) does not match it, so the parser
  reads on to the next line that does.
- Corrupted: a "Call Trace" (first of its kind) with no frame line in the
  15 lines after it.
"""
import re
import sys

PC = r"\[\<?(?:0x)?[0-9a-f]+\>?\]"
FUNC = r"([a-zA-Z0-9_]+)(?:\.|\+)"
RIP_FRAME = re.compile(
    r"(?:IP|NIP|pc |PC is at):? (?:(?:[0-9]+:)?(?:" + PC + r" +){0,2}" + FUNC +
    r"|(?:[0-9]+:)?0x[0-9a-f]+)")
CALL_TRACE = re.compile(r"Call (?:T|t)race:")
FRAME = re.compile(r"^ *(?:" + PC + r" ){0,2}" + FUNC)
STACK_STARTS = [re.compile(r) for r in (r"Call (?:T|t)race", r"Allocated:", r"Freed:",
                                         r"[^k] backtrace:", r"Backtrace:")]
CONSOLE = re.compile(r"^(?:<[0-9]+>)?\[ *[0-9]+\.[0-9]+\](?:\[ *[CT][0-9]+\])? ")
QUESTIONABLE = re.compile(r"(?:\[<[0-9a-f]+>\])? \? ")
# Oops headers that start a report, and the titles of the formats below.
HEADERS = ("BUG:", "WARNING:", "general protection fault", "divide error:",
           "invalid opcode:", "kernel BUG", "Kernel panic", "stack segment: ",
           "Unable to handle kernel", "PANIC: double fault", "UBSAN:")
NOT_A_NEW_REPORT = re.compile(r"invalid opcode: 0000|Kernel panic - not syncing|PANIC: double fault")
FORMATS = (
    (re.compile(r"BUG: (?:unable to handle kernel paging request|"
                r"unable to handle page fault for address)"),
     "BUG: unable to handle kernel paging request in {}"),
    (re.compile(r"BUG: (?:unable to handle kernel NULL pointer dereference|"
                r"kernel NULL pointer dereference)"),
     "BUG: unable to handle kernel NULL pointer dereference in {}"),
    (re.compile(r"general protection fault.*:"), "general protection fault in {}"),
)
SKIP = re.compile("|".join((
    "__sanitizer", "kasan", "panic", "invalid_op", "report_bug", "fixup_bug",
    "do_error", r"_trap$|do_trap", "show_stack", "dump_stack", "walk_stack",
    "dump_backtrace", "printk", "_indirect_thunk_", "print_tainted")))
STRIP_PREFIXES = ("__x64_", "__ia32_", "__do_sys_", "__se_", "____sys_",
                  "___sys_", "__sys_", "ksys_", "sys_")


def report_lines(log):
    lines, started = [], False
    for raw in log.splitlines():
        prefix = CONSOLE.match(raw)
        if not prefix:
            continue
        line = raw[prefix.end():]
        header = any(h in line for h in HEADERS)
        if started and header and not NOT_A_NEW_REPORT.search(line):
            break
        started = started or header
        if started and not ("<EOI>" not in line and QUESTIONABLE.search(line)):
            lines.append(line)
    return lines


def frame_name(match):
    name = match.group(1) if match and match.lastindex else None
    if name is None or SKIP.search(name):
        return None
    for p in STRIP_PREFIXES:
        if name.startswith(p):
            name = name[len(p):]
    return name


def key_frame(lines):
    frames, i = [], 0
    while i < len(lines) and not RIP_FRAME.search(lines[i]):
        i += 1
    if i < len(lines):
        frames.append(frame_name(RIP_FRAME.search(lines[i])))
    while i < len(lines) and not CALL_TRACE.search(lines[i]):
        i += 1
    for line in lines[i + 1:]:
        if starts_stack(line):
            break
        frames.append(frame_name(FRAME.match(line)))
    frames = [f for f in frames if f]
    return frames[0] if frames else "corrupted"


def starts_stack(line):
    return any(r.search(line) for r in STACK_STARTS)


def corrupted(lines):
    """After the first line each stack-start pattern matches."""
    for start in STACK_STARTS:
        first = next((i for i, line in enumerate(lines) if start.search(line)), None)
        if first is None:
            continue
        framed = False
        for after in lines[first + 1:first + 16]:
            if starts_stack(after):
                break
            if FRAME.match(after):
                framed = True
                break
        if not framed:
            return "no frames in a stack trace"
    return None


def main():
    lines = report_lines(open(sys.argv[1], errors="replace").read())
    text = "\n".join(lines)
    fmt = min(((f.search(text).start(), title) for f, title in FORMATS if f.search(text)),
              default=None)
    if not fmt:
        print("no NULL-pointer, paging-request or general-protection oops in the log",
              file=sys.stderr)
        return 1
    print("TITLE: " + fmt[1].format(key_frame(lines)))
    reason = corrupted(lines)
    if reason:
        print("CORRUPTED: " + reason)
    return 0


if __name__ == "__main__":
    sys.exit(main())
