#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a hung guest's vCPUs are: registers and symbolized stack words.

Usage: guest-hang-dump.py MONITOR_SOCKET KALLSYMS [CONSOLE_LOG [GDB_SOCKET VMLINUX]]

Talks to QEMU's human monitor on a UNIX socket.  A guest whose vCPUs all
spin with interrupts disabled prints nothing (no soft-lockup, RCU-stall or
hung-task report can run), so the monitor is the only witness left.  For
each vCPU it prints RIP, RSP, RFLAGS.IF and CR3, then the 64 stack words
above RSP that point into kernel or module text, named from the kernel's symbol list
(tests/data/kallsyms-ABI.txt.xz, System.map format, xz or plain)
and from the last "module-text: " copy of each /proc/modules line in
CONSOLE_LOG (tests/guest/guest-lib.sh note_modules prints them).
It samples every vCPU three times, a second apart: a vCPU whose RIP does
not move is stuck, one that moves is looping, and the stack words name the
loop.  With QEMU's gdbstub socket and the debug vmlinux it also has gdb
unwind every vCPU from the DWARF call frames (one backtrace per vCPU,
relocated by the boot's KASLR offset from CONSOLE_LOG), every CPU's
pending irq_work lists (irq-work-lists.py: a list that loops is a
hang in irq_work_run_list), and for each interrupt entry gdb stops at,
the interrupted RIP and stack from its pt_regs.  Before that, 40 samples
a quarter second apart give each vCPU's pc histogram, and that of the
context its interrupt interrupted: one pc there means the interrupted
code makes no progress; a vCPU trapping on int3 there gets the bytes
memory really holds at that pc.  Code-cache pcs among them are named by the
loaded kjit (gdb calls kjit_engine_original_pc_nowait on vCPU 0, whose
address the guest printed as "kjit-symbol: ").
"""
import bisect
import lzma
import os
import re
import socket
import subprocess
import sys
import time


def monitor(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)

    def read_prompt():
        buf = b""
        while not buf.endswith(b"(qemu) "):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return buf.decode(errors="replace")

    read_prompt()

    def cmd(line):
        s.sendall(line.encode() + b"\n")
        out = read_prompt()
        # Drop the echoed command line and the trailing prompt; strip the
        # terminal escapes the monitor adds around the echo.
        out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out)
        lines = out.replace("\r", "").split("\n")[1:-1]
        return "\n".join(lines)

    return cmd


def load_symbols(kallsyms, console_log):
    syms = []
    opener = lzma.open if kallsyms.endswith(".xz") else open
    with opener(kallsyms, "rt") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tTwW":
                syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    latest = {}
    if console_log:
        try:
            with open(console_log, errors="replace") as f:
                for line in f:
                    m = re.search(r"module-text: (\S+) (\d+) .* (0x[0-9a-f]+)", line)
                    if m:
                        latest[m.group(1)] = (int(m.group(3), 16), int(m.group(2)), m.group(1))
                    # The boot's KASLR offset: the list has link-time addresses.
                    m = re.search(r"kjit-init: _text (0x[0-9a-f]+)", line)
                    link_text = next((a for a, n in syms if n == "_text"), None)
                    if m and link_text is not None:
                        offset = int(m.group(1), 16) - link_text
                        syms = sorted((a + offset, n) for a, n in syms)
        except OSError:
            pass
    mods = list(latest.values())
    addrs = [a for a, _ in syms]
    text_lo, text_hi = (syms[0][0], syms[-1][0]) if syms else (0, 0)

    def name(addr):
        for base, size, mod in mods:
            if base <= addr < base + size:
                return "[%s]+0x%x" % (mod, addr - base)
        if syms and text_lo <= addr <= text_hi:
            i = bisect.bisect_right(addrs, addr) - 1
            if syms[i][1] not in ("_etext", "_einittext"):
                return "%s+0x%x" % (syms[i][1], addr - syms[i][0])
        return None

    return name


def kaslr_offset(kallsyms, console_log):
    """The boot's offset of _text from its link-time address, or None."""
    opener = lzma.open if kallsyms.endswith(".xz") else open
    link = None
    with opener(kallsyms, "rt") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "_text":
                link = int(parts[0], 16)
                break
    boot = last_console_hex(console_log, r"kjit-init: _text (0x[0-9a-f]+)")
    return None if link is None or boot is None else boot - link


def last_console_hex(console_log, pattern):
    """The hex number PATTERN's group 1 matched last in CONSOLE_LOG, or None."""
    found = None
    try:
        with open(console_log, errors="replace") as f:
            for line in f:
                m = re.search(pattern, line)
                if m:
                    found = int(m.group(1), 16)
    except OSError:
        return None
    return found


def run_gdb(sock, vmlinux, offset, cmds):
    """gdb's output for CMDS, attached to QEMU's gdbstub with the debug
    vmlinux loaded at the boot's KASLR offset."""
    argv = ["gdb", "-batch", "-nx", "-ex", "set pagination off", "-ex", "set confirm off",
            "-ex", "target remote %s" % sock, "-ex", "symbol-file -o 0x%x %s" % (offset, vmlinux)]
    for c in cmds + ["detach"]:
        argv += ["-ex", c]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=240)
        return out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return "gdb: %s" % e


def gdb_backtraces(sock, vmlinux, offset):
    """Every vCPU's backtrace, unwound by gdb through QEMU's gdbstub, then
    every CPU's pending irq_work lists (irq-work-lists.py)."""
    lists = os.path.join(os.path.dirname(os.path.abspath(__file__)), "irq-work-lists.py")
    return run_gdb(sock, vmlinux, offset, ["info threads", "thread apply all bt 40",
                                           "set $koff = 0x%x" % offset, "source %s" % lists])


# struct pt_regs: r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di
# orig_ax ip cs flags sp ss, 8 bytes each.
PT_IP, PT_FLAGS, PT_SP, PT_WORDS = 16, 18, 19, 21


def interrupted(cmd, name, backtraces):
    """What an interrupt or exception entry in a backtrace interrupted.

    gdb's unwinding stops at the entry (its frame has the pt_regs pointer):
    read pt_regs through the monitor, then name the interrupted RIP and the
    words of its stack."""
    for regs in sorted(set(re.findall(r"(?:sysvec|exc|common_interrupt)\w* \(regs=(0x[0-9a-f]+)", backtraces))):
        words = [int(w, 16) for w in re.findall(r"0x([0-9a-f]{16})", cmd("x/%dgx %s" % (PT_WORDS, regs)))]
        if len(words) < PT_WORDS:
            print("== regs %s: unreadable" % regs)
            continue
        ip, flags, sp = words[PT_IP], words[PT_FLAGS], words[PT_SP]
        print("== interrupted (regs %s): RIP %x %s  RSP %x  IF=%d" % (regs, ip, name(ip) or "?", sp, (flags >> 9) & 1))
        for w in re.findall(r"0x([0-9a-f]{16})", cmd("x/256gx 0x%x" % sp)):
            sym = name(int(w, 16))
            if sym:
                print("   %s %s" % (w, sym))


def read_words(cmd, addr, count):
    """Up to COUNT stack words from ADDR, stopping at the first unreadable
    chunk (the top of an interrupt stack is followed by a guard page)."""
    words = []
    while len(words) < count:
        out = cmd("x/32gx 0x%x" % (addr + 8 * len(words)))
        chunk = [int(w, 16) for w in re.findall(r"0x([0-9a-f]{16})", out)]
        if len(chunk) < 32:
            words += chunk
            break
        words += chunk
    return words


def interrupted_context(cmd, rsp, name):
    """The (ip, sp) of the innermost interrupt frame at or above RSP, or None.

    An interrupt frame's pt_regs ends with ip, cs (0x10), flags, sp, ss
    (0x18).  On an interrupt stack there is none: its top word holds the
    interrupted stack pointer (call_on_irqstack), and the frame is just
    above that."""
    for _ in range(2):
        words = read_words(cmd, rsp, 256)
        for i in range(len(words) - 4):
            if words[i + 1] == 0x10 and words[i + 4] == 0x18 and name(words[i]):
                return words[i], words[i + 3]
        if not words or len(words) == 256:
            return None
        rsp = words[-1]
    return None


def pc_histogram(cmd, name, ncpu, samples=40, gap=0.25):
    """Where each vCPU, and the context its interrupt interrupted, spend
    their time: a task looping under an interrupt storm shows its loop in
    the interrupted pcs, one that is stuck shows one pc."""
    seen = {}
    for _ in range(samples):
        for cpu in range(ncpu):
            cmd("cpu %d" % cpu)
            regs = cmd("info registers")
            m = re.search(r"\bRIP=([0-9a-f]+)", regs)
            r = re.search(r"\bRSP=([0-9a-f]+)", regs)
            if not m or not r:
                continue
            rip, rsp = int(m.group(1), 16), int(r.group(1), 16)
            seen.setdefault((cpu, "rip"), []).append(rip)
            ctx = interrupted_context(cmd, rsp, name)
            if ctx:
                seen.setdefault((cpu, "interrupted"), []).append(ctx[0])
        time.sleep(gap)
    top = []
    for (cpu, kind), pcs in sorted(seen.items()):
        counts = {}
        for pc in pcs:
            counts[pc] = counts.get(pc, 0) + 1
        print("== vCPU %d %s pcs (%d samples, %d distinct)" % (cpu, kind, len(pcs), len(counts)))
        for pc, n in sorted(counts.items(), key=lambda kv: -kv[1])[:16]:
            print("   %3d %x %s" % (n, pc, name(pc) or "?"))
            top.append(pc)
    return top, seen


def read_bytes(cmd, addr, count=8):
    """COUNT bytes of guest memory at ADDR (the current vCPU's mapping)."""
    return [int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})\b", cmd("x/%dxb 0x%x" % (count, addr)))][:count]


def stale_int3(cmd, name, seen):
    """Memory at each pc an int3 interrupted over and over.  The trap saves
    the pc after the int3; a kprobe handler that finds no int3 there any
    more backs the pc up to it and returns ("removed by another CPU").  A
    vCPU that keeps trapping where memory holds no int3 runs a stale copy
    of the code: QEMU's multi-threaded TCG missed another vCPU's
    text_poke (tools/lab/run-guest.sh, --tcg-single)."""
    for (cpu, kind), pcs in sorted(seen.items()):
        if kind != "rip" or not any((name(pc) or "").startswith("asm_exc_int3") for pc in pcs):
            continue
        for pc in sorted(set(seen.get((cpu, "interrupted"), []))):
            cmd("cpu %d" % cpu)
            at = read_bytes(cmd, pc - 1, 8)
            if len(at) < 2:
                continue
            print("== vCPU %d interrupted at %x %s: memory from %x: %s" %
                  (cpu, pc, name(pc) or "?", pc - 1, " ".join("%02x" % b for b in at)))
            if at[0] != 0xcc and at[1] != 0xcc:
                print("   no int3 at %x or %x, yet vCPU %d traps on one there: stale code in"
                      " QEMU's multi-threaded TCG (tools/lab/run-guest.sh --tcg-single)" % (pc - 1, pc, cpu))


def kjit_originals(sock, vmlinux, offset, console_log, pcs):
    """The original pc of each code-cache pc, asked of the loaded kjit
    (kjit_engine_original_pc_nowait, called by gdb on vCPU 0 alone; its
    address is in the console's "kjit-symbol: " line)."""
    fn = last_console_hex(console_log, r"kjit-symbol: ([0-9a-f]+) \w kjit_engine_original_pc_nowait\b")
    if not fn or not pcs:
        return "no kjit_engine_original_pc_nowait address in the console log" if not fn else ""
    cmds = ["thread 1", "set scheduler-locking on"]
    for pc in pcs:
        cmds += ["echo cache 0x%x (0 if not a translation):\\n" % pc,
                 "print/x ((unsigned long (*)(unsigned long))0x%x)(0x%x)" % (fn, pc),
                 "info symbol $", "x/12i 0x%x" % pc]
    return run_gdb(sock, vmlinux, offset, cmds)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    name = load_symbols(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    try:
        cmd = monitor(sys.argv[1])
    except OSError as e:
        print("guest-hang-dump: no monitor (%s)" % e)
        return 1
    print(cmd("info cpus"))
    ncpu = len(re.findall(r"CPU #\d+", cmd("info cpus")))
    for sample in range(3):
        if sample:
            time.sleep(1)
        print("==== sample %d" % (sample + 1))
        for cpu in range(ncpu):
            cmd("cpu %d" % cpu)
            regs = cmd("info registers")
            get = lambda r: int(re.search(r"\b%s=([0-9a-f]+)" % r, regs).group(1), 16)
            rip, rsp, rfl, cr3 = get("RIP"), get("RSP"), get("RFL"), get("CR3")
            print("== vCPU %d: RIP %x %s  RSP %x  IF=%d  CR3 %x" %
                  (cpu, rip, name(rip) or "?", rsp, (rfl >> 9) & 1, cr3))
            # 256 words: past an interrupt frame to the interrupted code.
            words = re.findall(r"0x([0-9a-f]{16})", cmd("x/256gx 0x%x" % rsp))
            for w in words:
                sym = name(int(w, 16))
                if sym:
                    print("   %s %s" % (w, sym))
    print("==== pc histogram")
    top, seen = pc_histogram(cmd, name, ncpu)
    print("==== int3 traps against memory")
    stale_int3(cmd, name, seen)
    if len(sys.argv) > 5:
        offset = kaslr_offset(sys.argv[2], sys.argv[3])
        if offset is None:
            print("gdb: no KASLR offset in the console log")
        else:
            print("==== gdb (KASLR offset 0x%x)" % offset)
            bt = gdb_backtraces(sys.argv[4], sys.argv[5], offset)
            print(bt)
            interrupted(cmd, name, bt)
            cache = [pc for pc in dict.fromkeys(top) if (name(pc) or "").startswith("[kjit]")][:12]
            print("==== code-cache pcs named by kjit")
            print(kjit_originals(sys.argv[4], sys.argv[5], offset, sys.argv[3], cache))
    # Then ask the kernel itself (run-guest.sh boots with
    # sysrq_always_enabled): 'l' backtraces every CPU through an NMI, which
    # works with interrupts off; 'w' lists the tasks blocked in D state.
    # Both go to the console, which the host keeps; '9' first, so a "quiet"
    # boot's console level does not hide them.
    for key in ("9", "l", "w"):
        cmd("sendkey alt-sysrq-%s" % key)
        time.sleep(4)
    print("(sysrq l and w sent: their reports are on the console)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
