#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A scripted gdb session on `kjit-sim replay CAPTURE --gdb`, checked
against what the capture's log holds (kjit-sim info --log) and what the
replay computes (kjit-sim replay).

Usage: gdb_session.py KJIT_SIM CAPTURE [--vmlinux FILE|auto] [--fcntl]
                      [--translated-too] [--gdb GDB]
--vmlinux auto: the one kjit-sim finds from the capture's KERNEL section.
--as-installed RELEASE: first gives a copy of the capture a KERNEL section
naming RELEASE and --vmlinux's build id, installs --vmlinux in a debug root
as Debian's -dbg package would (KJIT_DEBUG_ROOT), and runs with auto: the
lookup a capture from kjitctl gets (tests/guest/capture-suite.sh does it
with a capture from the guest).

The session (Debian's gdb in batch mode, started with the command line the
server prints):
  at the first stop rip is the capture's entry and rdi its pt_regs; with
    the debug vmlinux the frame is the system call's and regs->di is the
    value the log says the kernel read there;
  a breakpoint on the first block that ends in a call (not the entry's); there the
    registers are dumped; five stepi and five reverse-stepi come back to
    the same dump;
  stepping into the callee (the block the log has after the call), its
    return address on the stack; finish comes back there;
  reverse-continue goes back to the breakpoint: the same dump again;
  a write watchpoint on the return slot below the stack pointer stops at
    the callee's entry with the return address as the new value;
    reverse-continue stops at the call that wrote it;
  continue to the end: the exit code is rax's low 32 bits as kjit-sim
    replay computes rax, and the console line says all of rax.
--fcntl adds the source-level checks of the committed fcntl capture
(tests/data/captures/fcntl.kjitcap): a breakpoint on fs/fcntl.c:447, the
locals fd and cmd against the log, `step` into security_file_fcntl.
Without a vmlinux (or one the capture's code does not match) the checks
use addresses only and the output says so.  --translated-too repeats
breakpoint, stepping and reversing on the translated view (--translated),
with `monitor orig` mapping the cache back to the original addresses.
Exit 0 when every check passes, 1 otherwise, 77 when there is no gdb.
"""
import argparse
import os
import struct
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zlib

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)
    return cond


def run(cmd, timeout=600):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)


class Log:
    """What `kjit-sim info --log` says about the capture."""

    def __init__(self, sim, capture):
        out = run([sim, "info", capture, "--log"]).stdout
        self.name = re.search(r"^name:\s+(\S+)", out, re.M).group(1)
        self.entry = int(re.search(r"^entry:\s+(0x[0-9a-f]+)", out, re.M).group(1), 16)
        self.regs = {k: int(v, 16) for k, v in re.findall(r"\b(r[a-z0-9]+)\s+(0x[0-9a-f]+)", out)}
        self.blocks = [(int(pc, 16), int(n), fl.strip())
                       for pc, n, fl in re.findall(r"^  #\d+ (0x[0-9a-f]+) (\d+) insns ?([cl ]*)", out, re.M)]
        self.reads = [(int(pc, 16), int(addr, 16), int(size), int(val, 16)) for pc, addr, size, val in re.findall(
            r"^  #\d+ pc (0x[0-9a-f]+)\S* \S* ?addr (0x[0-9a-f]+) seg \d+ flags \S+ (\d+) bytes (0x[0-9a-f]+)",
            out, re.M)]
        replay = run([sim, "replay", capture, "--tool", "none"]).stdout
        kaslr = re.search(r"^kaslr: +offset (0x[0-9a-f]+)", out, re.M)
        self.kaslr = int(kaslr.group(1), 16) if kaslr else 0
        self.rax = int(re.search(r"^  original: .* rax (0x[0-9a-f]+)", replay, re.M).group(1), 16)

    def read_at(self, addr):
        """The value the kernel read at `addr` first, or None."""
        for _pc, a, _size, v in self.reads:
            if a == addr:
                return v
        return None

    def first_call(self):
        """The first block that ends in a call, but the entry's (gdb steps
        off a breakpoint where it stands), and the block after it (the
        callee)."""
        for i, (pc, n, fl) in enumerate(self.blocks[:-1]):
            if "c" in fl and pc != self.entry:
                return pc, self.blocks[i + 1][0]
        return None, None


class Server:
    def __init__(self, sim, capture, extra):
        self.p = subprocess.Popen([sim, "replay", capture, "--gdb", "127.0.0.1:0"] + extra,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.banner = []
        for line in self.p.stdout:
            self.banner.append(line.rstrip("\n"))
            if line.startswith("  gdb "):
                break
        self.command = shlex.split(self.banner[-1]) if self.banner and self.banner[-1].startswith("  gdb ") else None

    def finish(self):
        try:
            out, err = self.p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        return self.p.returncode, "\n".join(self.banner) + "\n" + out, err


def gdb_session(gdb, server, script):
    """Runs gdb with the server's command line and the script, one -ex per
    command (an error then fails that command only; a list of lines is a
    block, a `while` loop, sourced from a file), and returns the output
    split at the `echo @@NAME` markers."""
    cmd = [gdb, "-nx", "-batch"] + server.command[1:] + ["-ex", "set pagination off", "-ex", "set width 0"]
    files = []
    try:
        for item in script:
            if isinstance(item, list):
                with tempfile.NamedTemporaryFile("w", suffix=".gdb", delete=False) as f:
                    f.write("\n".join(item) + "\n")
                files.append(f.name)
                cmd += ["-x", f.name]
            else:
                cmd += ["-ex", item]
        out = run(cmd).stdout
    finally:
        for f in files:
            os.unlink(f)
    sections, name = {}, "start"
    for line in out.splitlines():
        m = re.match(r"^@@(\S+)$", line)
        if m:
            name = m.group(1)
            sections[name] = ""
        else:
            sections[name] = sections.get(name, "") + line + "\n"
    return out, sections


def value(text):
    """The number gdb printed as `$N = V` (decimal or hex), or None."""
    m = re.search(r"\$\d+ = (-?(?:0x[0-9a-f]+|\d+))", text)
    return None if not m else int(m.group(1), 0)


def registers(text):
    """`info registers` as name -> value, without the unavailable ones."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\w+)\s+(0x[0-9a-f]+)", text, re.M)}


def mark(name):
    return "echo @@" + name + "\\n"


def exit_code(rax):
    """gdb's $_exitcode for a return value: (int) rax."""
    low = rax & 0xffffffff
    return low - (1 << 32) if low >= 1 << 31 else low


def original_session(args, log, symbols):
    bp, callee = log.first_call()
    regs_ptr = log.regs["rdi"]
    di = log.read_at(regs_ptr + 0x70)  # pt_regs.di: the first argument
    s = [mark("first"), "print/x $pc", mark("rdi"), "print/x $rdi",
         mark("di"), "print/x *(unsigned long *)($rdi + 0x70)"]
    if symbols:
        s += [mark("symbol"), "info symbol $pc", mark("frame"), "frame",
              mark("regs_di"), "print/x ((struct pt_regs *)$rdi)->di"]
    if args.fcntl and symbols:
        s += [mark("fcntl_break"), "break fs/fcntl.c:447", "continue",
              mark("fcntl_fd"), "print fd", mark("fcntl_cmd"), "print cmd",
              mark("fcntl_step"), "step", mark("fcntl_step_pc"), "print/x $pc",
              mark("fcntl_finish"), "finish", mark("fcntl_finish_pc"), "print/x $pc",
              "delete", mark("fcntl_back"), "reverse-continue", mark("fcntl_back_pc"), "print/x $pc"]
    if bp is not None:
        s += ["break *0x%x" % bp, mark("to_break"), "continue", mark("bp_pc"), "print/x $pc",
              mark("regs1"), "info registers"]
        s += ["stepi"] * 5 + ["reverse-stepi"] * 5 + [mark("regs2"), "info registers"]
        # Into the callee, one instruction at a time, at most 64.
        s += [["set $i = 0", "while $pc != 0x%x && $i < 64" % callee, "stepi", "set $i = $i + 1", "end"],
              mark("callee_pc"), "print/x $pc", mark("callee_ret"), "print/x *(unsigned long *)$sp",
              mark("callee_sp"), "print/x $sp"]
        s += ["set $callee_sp = $sp"]
        if symbols:
            s += [mark("callee_frame"), "frame"]
        s += [mark("finish"), "finish", mark("finish_pc"), "print/x $pc",
              mark("back"), "reverse-continue", mark("back_pc"), "print/x $pc", mark("regs3"), "info registers",
              # The slot the call writes its return address to: $sp at the callee's entry.
              mark("watch"), "watch -l *(unsigned long *)$callee_sp", "continue", mark("watch_pc"), "print/x $pc",
              mark("watch_slot"), "print/x *(unsigned long *)$sp",
              mark("rwatch"), "reverse-continue", mark("rwatch_pc"), "print/x $pc"]
    else:
        print("gdb_session: no call after the entry block in %s's log: the breakpoint, callee and watchpoint "
              "checks are skipped" % log.name)
    s += [mark("where"), "monitor where", "delete", mark("end"), "continue", mark("exitcode"), "print $_exitcode"]
    # With --vmlinux auto the server finds it again.
    server = Server(args.kjit_sim, args.capture, ["--vmlinux", args.vmlinux] if symbols and not args.auto else [])
    if not check(server.command is not None, "the server prints a gdb command line"):
        print("\n".join(server.banner))
        return
    if symbols:
        check("symbol-file -o 0x%x %s" % (log.kaslr, args.vmlinux) in " ".join(server.command),
              "the gdb command line loads the debug vmlinux at the capture's KASLR offset 0x%x" % log.kaslr)
    out, sec = gdb_session(args.gdb, server, s)
    rc, sout, serr = server.finish()
    if args.verbose:
        print(out)
    check(rc == 0, "the server exits 0 after the session (status %s)" % rc)
    check(value(sec.get("first", "")) == log.entry, "the first stop is at the entry 0x%x" % log.entry)
    check(value(sec.get("rdi", "")) == regs_ptr, "rdi is the capture's pt_regs 0x%x" % regs_ptr)
    if di is not None:
        check(value(sec.get("di", "")) == di, "pt_regs.di in memory is what the log read there (0x%x)" % di)
    if symbols:
        func = log.name.split("#")[0]
        check(sec.get("symbol", "").startswith(func + " + "), "the entry is in %s: %s" %
              (func, sec.get("symbol", "").strip()))
        frame = sec.get("frame", "").strip()
        check(re.match(r"#0 .* at \S+:\d+", frame) is not None,
              "the first frame has its source line: %s" % (frame.splitlines()[0][:70] if frame else ""))
        if di is not None:
            check(value(sec.get("regs_di", "")) == di, "((struct pt_regs *) $rdi)->di is the log's 0x%x" % di)
    if args.fcntl and symbols:
        fd, cmd = log.read_at(regs_ptr + 0x70), log.read_at(regs_ptr + 0x68)
        check("fs/fcntl.c:447" in sec.get("fcntl_break", ""), "stopped on fs/fcntl.c:447")
        check(value(sec.get("fcntl_fd", "")) == fd, "the local fd is the log's regs->di (%s)" % fd)
        check(value(sec.get("fcntl_cmd", "")) == cmd, "the local cmd is the log's regs->si (%s)" % cmd)
        check("security_file_fcntl (" in sec.get("fcntl_step", ""), "step enters security_file_fcntl")
        check(value(sec.get("fcntl_step_pc", "")) == callee, "at the callee's first block 0x%x" % callee)
        check("Value returned is" in sec.get("fcntl_finish", ""), "finish prints the value returned")
        check("Breakpoint" not in sec.get("fcntl_back", "") and
              "No more reverse-execution history" in sec.get("fcntl_back", ""),
              "reverse-continue with no breakpoint goes back to the start")
        check(value(sec.get("fcntl_back_pc", "")) == log.entry, "... the entry again")
    if bp is not None:
        check(value(sec.get("bp_pc", "")) == bp, "continue stops on the breakpoint 0x%x" % bp)
        r1, r2, r3 = (registers(sec.get(k, "")) for k in ("regs1", "regs2", "regs3"))
        check(len(r1) >= 20 and r1.get("rip") == hex(bp), "info registers at the breakpoint (%d registers)" % len(r1))
        check(r2 == r1, "5 stepi then 5 reverse-stepi: the same registers")
        ret = value(sec.get("callee_ret", ""))
        check(value(sec.get("callee_pc", "")) == callee, "stepped into the callee 0x%x (the log's next block)" % callee)
        if symbols:
            frame = sec.get("callee_frame", "").strip()
            check(frame.startswith("#0") and " at " in frame,
                  "the callee's frame has its source line: " + (frame.splitlines()[0][:70] if frame else "none"))
        check(ret is not None and bp < ret < bp + 4096, "its return address 0x%x is after the call" % (ret or 0))
        if symbols:
            check("Value returned is" in sec.get("finish", ""), "finish prints the value returned")
        check(value(sec.get("finish_pc", "")) == ret, "finish returns to the return address")
        check(value(sec.get("back_pc", "")) == bp, "reverse-continue goes back to the breakpoint")
        check(r3 == r1, "... with the same registers as the first time")
        w = sec.get("watch", "")
        check("atchpoint" in w and re.search(r"New value = %d\b" % (ret or 0), w) is not None,
              "the watchpoint on the return slot stops with the return address as its new value")
        check(value(sec.get("watch_pc", "")) == callee, "... at the callee's entry")
        check(value(sec.get("watch_slot", "")) == ret, "... and the slot holds it")
        rw, rpc = sec.get("rwatch", ""), value(sec.get("rwatch_pc", ""))
        check("atchpoint" in rw and rpc is not None and bp <= rpc < (ret or 0),
              "reverse-continue stops on the call that wrote it (0x%x)" % (rpc or 0))
    check(re.search(r"instruction \d+ of \d+", sec.get("where", "")) is not None, "monitor where")
    code = exit_code(log.rax)
    end = sec.get("end", "")
    check(("exited normally" in end) if code == 0 else ("exited with code" in end),
          "continue runs to the end: " + (end.strip().splitlines()[-1] if end.strip() else "nothing"))
    check("returned rax = 0x%x" % log.rax in end, "the console says rax = 0x%x, as kjit-sim replay" % log.rax)
    check(value(sec.get("exitcode", "")) == code, "$_exitcode is (int) rax = %d" % code)
    check("returned rax = 0x%x" % log.rax in sout, "the server prints rax too")
    if failures:
        print(out)
        print(sout)
        print(serr)


def translated_session(args, log):
    bp, _callee = log.first_call()
    s = [mark("first"), "print/x $pc", mark("orig"), "monitor orig"]
    if bp is not None:
        s += ["break *0x%x" % bp, mark("to_break"), "continue", mark("bp_orig"), "monitor orig",
              mark("regs1"), "info registers"] + ["stepi"] * 3 + ["reverse-stepi"] * 3 + [
              mark("regs2"), "info registers", "delete"]
    s += [mark("end"), "continue", mark("exitcode"), "print $_exitcode"]
    server = Server(args.kjit_sim, args.capture, ["--translated"])
    if not check(server.command is not None, "translated: the server prints a gdb command line"):
        return
    out, sec = gdb_session(args.gdb, server, s)
    rc, sout, serr = server.finish()
    if args.verbose:
        print(out)
    check(rc == 0, "translated: the server exits 0 (status %s)" % rc)
    first = value(sec.get("first", ""))
    check(first is not None and first != log.entry, "translated: the first stop is in the code cache (0x%x)" % (first or 0))
    check(("original 0x%x" % log.entry) in sec.get("orig", ""), "translated: monitor orig maps it to the entry")
    if bp is not None:
        # On the copy of the breakpoint's instruction, or of the one after a
        # NOP or a jump there, which the engine does not copy.
        m = re.search(r"original (0x[0-9a-f]+)", sec.get("bp_orig", ""))
        check("exited" not in sec.get("to_break", "") and m is not None,
              "translated: the breakpoint on 0x%x stops on a copy of %s" % (bp, m.group(1) if m else "nothing"))
        r1, r2 = registers(sec.get("regs1", "")), registers(sec.get("regs2", ""))
        check(len(r1) >= 20 and r1 == r2, "translated: 3 stepi then 3 reverse-stepi: the same registers")
    check(value(sec.get("exitcode", "")) == exit_code(log.rax), "translated: $_exitcode is (int) rax = %d" %
          exit_code(log.rax))
    if failures:
        print(out)
        print(sout)
        print(serr)


def as_installed(args, release, workdir):
    """A copy of the capture that names `release` and the vmlinux's build
    id (a KERNEL section, docs/capture-format.md), and a debug root where
    /usr/lib/debug/boot/vmlinux-RELEASE is the vmlinux."""
    notes = run(["readelf", "-n", args.vmlinux]).stdout
    bid = re.search(r"Build ID: ([0-9a-f]+)", notes)
    data = bytearray(open(args.capture, "rb").read())
    bid = bid.group(1) if bid else ""
    payload = struct.pack("<I", len(release)) + release.encode() + struct.pack("<I", len(bid)) + bid.encode()
    header = struct.pack("<IQ", 6, len(payload))
    struct.pack_into("<I", data, 12, struct.unpack_from("<I", data, 12)[0] + 1)
    data += header + struct.pack("<I", zlib.crc32(header + payload) & 0xffffffff) + payload
    capture = os.path.join(workdir, os.path.basename(args.capture))
    with open(capture, "wb") as f:
        f.write(data)
    boot = os.path.join(workdir, "root/usr/lib/debug/boot")
    os.makedirs(boot)
    os.symlink(os.path.abspath(args.vmlinux), os.path.join(boot, "vmlinux-" + release))
    os.environ["KJIT_DEBUG_ROOT"] = os.path.join(workdir, "root")
    args.capture, args.vmlinux = capture, "auto"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kjit_sim")
    ap.add_argument("capture")
    ap.add_argument("--vmlinux", default="")
    ap.add_argument("--fcntl", action="store_true")
    ap.add_argument("--translated-too", action="store_true")
    ap.add_argument("--gdb", default=shutil.which("gdb") or "/usr/bin/gdb")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--as-installed", default="")
    args = ap.parse_args()
    workdir = tempfile.TemporaryDirectory()
    if args.as_installed:
        if not os.path.exists(args.vmlinux):
            print("gdb_session: no %s to install: skipped" % args.vmlinux)
            return 77
        as_installed(args, args.as_installed, workdir.name)
    args.auto = args.vmlinux == "auto"
    if not os.access(args.gdb, os.X_OK):
        print("gdb_session: no gdb (%s): skipped" % args.gdb)
        return 77
    log = Log(args.kjit_sim, args.capture)
    symbols = False
    if args.vmlinux == "auto" or (args.vmlinux and os.path.exists(args.vmlinux)):
        # The vmlinux must be the capture's kernel's: its code agrees with
        # the capture's but for the sites the kernel patched at boot.
        srv = Server(args.kjit_sim, args.capture, [] if args.vmlinux == "auto" else ["--vmlinux", args.vmlinux])
        srv.p.kill()
        srv.p.communicate()
        banner = "\n".join(srv.banner)
        if args.vmlinux == "auto":
            found = re.search(r"debug vmlinux (\S+) \(found by the capture's kernel (\S+)", banner)
            check(found is not None, "kjit-sim finds the debug vmlinux from the capture's kernel: " +
                  ("%s found by the capture's kernel %s" % found.groups() if found else banner))
            args.vmlinux = found.group(1) if found else ""
        m = re.search(r"(\d+) of (\d+) captured code bytes", banner)
        symbols = m is not None and int(m.group(2)) > 0 and int(m.group(1)) >= 0.85 * int(m.group(2))
        print("gdb_session: %s %s" % (args.vmlinux, ("agrees with the capture: " + m.group(0)) if symbols else
                                      "is not the capture's kernel's: " + (m.group(0) if m else "?")))
    if not symbols:
        print("gdb_session: no debug vmlinux for %s: the source-level checks are skipped, addresses only" %
              args.capture)
    original_session(args, log, symbols)
    if args.translated_too:
        translated_session(args, log)
    print("gdb_session: %s, %d checks failed" % ("FAIL" if failures else "ok", len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
