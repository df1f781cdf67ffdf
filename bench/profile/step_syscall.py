# SPDX-License-Identifier: GPL-2.0
# gdb -batch -x step_syscall.py: single-steps whole system calls in a QEMU
# guest through the gdbstub and writes every kernel PC they execute.
# Env: PORT (gdbstub), ENTRY (hex address of entry_SYSCALL_64), NR (syscall
# number to wait for), MAX_STEPS (50000: a sample's cap), STOP (address of the loop's kjit_profile_stop, set
# at the end so the guest goes on), SAMPLES, OUT (file: one "sample N COUNT" line then the
# PCs in hex, per sample; OUT.insns: the first sample disassembled).  QEMU masks interrupts and timers while
# single-stepping (its default sstep flags), so a sample is one syscall path.
import os
import gdb

USER_TOP = 0x800000000000
MAX_STEPS = int(os.environ.get("MAX_STEPS", "50000"))

gdb.execute("set pagination off")
gdb.execute("set architecture i386:x86-64")
gdb.execute("target remote :%s" % os.environ["PORT"])
gdb.execute("break *%s" % os.environ["ENTRY"])
nr = int(os.environ["NR"])


def next_syscall():
    while True:
        gdb.execute("continue", to_string=True)
        if int(gdb.parse_and_eval("$rax")) == nr:
            return


with open(os.environ["OUT"], "w") as out, open(os.environ["OUT"] + ".insns", "w") as listing:
    for s in range(int(os.environ["SAMPLES"])):
        next_syscall()
        pcs = []
        while len(pcs) < MAX_STEPS:
            pc = int(gdb.parse_and_eval("$pc")) & (2**64 - 1)
            if pc < USER_TOP:  # back in user space: sysret done
                break
            pcs.append(pc)
            if s == 0:  # the first sample's instructions, for reading
                listing.write(gdb.execute("x/i $pc", to_string=True).replace("=> ", ""))
            gdb.execute("stepi", to_string=True)
        out.write("sample %d %d\n%s\n" % (s, len(pcs), " ".join("%x" % p for p in pcs)))
        out.flush()
# Stopped at a syscall of the loop: its address space is the current one.
next_syscall()
gdb.execute("set var *(int *)%s = 1" % os.environ["STOP"])
gdb.execute("delete")
gdb.execute("detach")
