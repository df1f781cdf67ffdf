#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the lab guest (busybox sh, cwd = the share) for
# tests/syzkaller/execprog.sh: syzkaller's own syz-execprog and
# syz-executor on the programs in progs/, without kjit (syzkaller must
# refuse), then with kjit's KCOV: per-call coverage (-cover=1 -coverfile),
# comparisons (-cover=1 -hints), and two procs repeating every program.
# PCs go to cov/PROG.CALL (syz-execprog's files); the host checks them
# against the vmlinux.
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
step() { echo "<2>kjit-syz: $*" > /dev/kmsg 2>/dev/null; echo "== $*"; }
# TCG runs the kernel 10-50x slower than hardware, and coverage slows it
# further: a program's first call faults in (and clears) a huge page of
# syzkaller's data area, longer than the executor's per-call timeout at
# syzkaller's own factor for emulation (10); a call still running at its
# timeout leaves its results unset for the calls after it.
X="./syz-execprog -executor=./syz-executor -sandbox=none -slowdown=30"
# syz-execprog maps its shared memory from files in TMPDIR.
mkdir -p cov hints /tmp
export TMPDIR=/tmp
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up

step "without kjit: syzkaller stops on the missing device"
if $X -procs=1 -cover=1 progs/open-read.txt > nokjit.log 2>&1; then
  fail no_kcov_refused "syz-execprog -cover=1 ran without a KCOV device"
else
  chk no_kcov_refused grep -q 'SYZFAIL.*kcov' nokjit.log
fi
tail -3 nokjit.log

step "kjit and kcov enable"
insmod ./kjit.ko || { fail insmod; guest_done EXECPROG-GUEST-DONE; exit 1; }
note_modules
chk kcov_enable $K kcov enable
awk -v link="$LINK_TEXT" '$3 == "_text" {print $1, link}' /proc/kallsyms > kaslr.txt

# A boot's first TCP connect fills inet_hashtables' 256 KiB table_perturb
# with random bytes (get_random_sleepable_once): about 190,000 PCs of
# chacha in that one call, longer than its timeout under TCG, so the
# program's later calls never run. Once per boot, not the call's own path:
# done here, without coverage.
$X -procs=1 progs/tcp-loopback.txt > warmup.log 2>&1

step "per-call coverage, one program at a time"
for p in progs/*.txt; do
  n=$(basename "$p" .txt)
  if $X -procs=1 -cover=1 -coverfile="cov/$n" "$p" > "cov/$n.log" 2>&1; then
    # "DATE TIME call #I: signal S, coverage C", one line per call: I S C
    awk '/call #[0-9]+: signal/ {gsub(/[#:,]/, ""); print $4, $6, $8}' "cov/$n.log" > "cov/$n.calls"
    pass "cover_run_$n" "$(wc -l < "cov/$n.calls") calls, PCs $(awk '{printf "%s ", $3}' "cov/$n.calls")"
  else
    fail "cover_run_$n" "$(tail -3 "cov/$n.log" | tr '\n' ' ')"
  fi
done

step "comparisons (hints), one program at a time"
for p in progs/*.txt; do
  n=$(basename "$p" .txt)
  if $X -procs=1 -cover=1 -hints "$p" > "hints/$n.log" 2>&1; then
    pass "hints_run_$n" "$(grep -o 'ncomps=[0-9]* ncandidates=[0-9]*' "hints/$n.log" | tail -1)"
  else
    fail "hints_run_$n" "$(tail -3 "hints/$n.log" | tr '\n' ' ')"
  fi
done

step "two procs, every program 10 times, coverage then comparisons"
$X -procs=2 -repeat=10 -cover=1 progs/*.txt > stress-cover.log 2>&1
echo $? > stress-cover.rc
$X -procs=2 -repeat=10 -cover=1 -hints progs/*.txt > stress-hints.log 2>&1
echo $? > stress-hints.rc
chk stress_cover sh -c "[ \$(cat stress-cover.rc) = 0 ] && ! grep -q SYZFAIL stress-cover.log"
chk stress_hints sh -c "[ \$(cat stress-hints.rc) = 0 ] && ! grep -q SYZFAIL stress-hints.log"
$K stats > stats.txt

chk kcov_disable $K kcov disable
chk rmmod rmmod kjit
guest_done EXECPROG-GUEST-DONE
