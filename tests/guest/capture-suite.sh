#!/bin/bash
# Capture/replay suite (issue 4).  Usage: tests/guest/capture-suite.sh [BUILD_DIR]
#   Needs BUILD_DIR/module/kjit.ko and BUILD_DIR/os/userspace-sim/kjit-sim.
#   Env: KJIT_CAPTURE_SYSCALLS (the list below), KJIT_CAPTURE_KEEP=DIR (copy the
#        captures there), KJIT_CAPTURE_MIN (passing replays required, default:
#        all but one, see below).
# In the guest: insmod kjit.ko, then for each system call
#   kjitctl capture --syscall NAME --count 4 --first-complete -o caps/NAME.kjitcap \
#           -- ./capture_workload NAME 4
# (the first of the workload's 4 invocations that returned inside the code
# cache is kept: one preempted into __schedule runs natively from there).  On the host every
# capture is replayed: kjit-sim replay FILE must exit 0 (block sequence, reads,
# writes, return value, and icount/bbcount/calltrace equal to the kernel's).
# Prints one line per system call and a summary; fails when fewer than
# KJIT_CAPTURE_MIN (default: all but one) replay exactly or the kernel log
# has errors.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
SYSCALLS="${KJIT_CAPTURE_SYSCALLS:-getppid getpid getuid umask newuname read write pipe2 openat close newfstat lseek dup fcntl ioctl brk mprotect munmap kill rt_sigaction rt_sigprocmask socket getsockname sendto recvfrom poll epoll_create1 clock_gettime clock_getres gettimeofday timerfd_create timerfd_settime getitimer times sysinfo getrusage getcwd}"
# All but one must replay.  Before 2026-11-23 (second session) read's or
# timerfd_create's capture failed now and then (2 of 6 suite runs; 1 of 227
# captures in a repro): the recorder read a load's value before the load,
# across its own call, and a timer tick in between changed the timekeeper's
# seqcount, so the replay retried a loop the kernel did not (or skipped one
# it took).  Plain loads are now logged after they ran (os/linux/capture.c):
# 0 of 227 failed.  One failure is still allowed because nothing proves the
# window closed on every path; each failure prints its first problem.
set -- $SYSCALLS
MIN="${KJIT_CAPTURE_MIN:-$(($# - 1))}"
ko="$B/module/kjit.ko"
sim="$B/os/userspace-sim/kjit-sim"
[ -f "$ko" ] || { echo "capture-suite: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
[ -x "$sim" ] || { echo "capture-suite: $sim missing (cmake --build $B --target kjit-sim)" >&2; exit 2; }

share="$B/guest-capture"
rm -rf "$share"; mkdir -p "$share/caps"
cp "$ko" "$share/"
gcc -O2 -static -Wall -o "$share/capture_workload" "$root/tests/guest/capture_workload.c"
gcc -O2 -static -Wall -I "$root/os/linux" -o "$share/kjitctl" "$root/tools/kjitctl/kjitctl.c"

cat > "$share/capture-guest.sh" <<GUEST
#!/bin/sh
set -u
insmod ./kjit.ko || { echo CAPTURE-FAIL insmod; exit 1; }
for s in $SYSCALLS; do
  echo "== \$s"
  : > caps/\$s.log
  for try in 1 2 3; do
    ./kjitctl capture --syscall \$s --count 4 --first-complete -o caps/\$s.kjitcap -- ./capture_workload \$s 4 >> caps/\$s.log 2>&1
    rc=\$?
    echo "try \$try rc \$rc" >> caps/\$s.log
    [ \$rc = 0 ] && break
  done
  cat caps/\$s.log
  sync
done
# recording overhead: 300 invocations natively, attached with no tool, and
# every one of them recorded (one file written; time per invocation after 30 warm-up ones,
# printed by the workload)
for s in getppid newuname getrusage; do
  ./capture_workload \$s 300 2>&1 >/dev/null | sed "s/^time/overhead native/"
  ./kjitctl config --tool none >/dev/null && ./kjitctl attach __x64_sys_\$s >/dev/null
  ./capture_workload \$s 300 2>&1 >/dev/null | sed "s/^time/overhead attached/"
  ./kjitctl detach all >/dev/null
  ./kjitctl capture --syscall \$s --count 300 --buf-kb 16384 --first-complete -o /tmp/ovh.kjitcap -- ./capture_workload \$s 300 2>&1 \
    | grep -E "^time|invocation\(s\) written" | sed -e "s/^time/overhead capturing/" -e "s/^capture /overhead capture /"
  rm -f /tmp/ovh.kjitcap*
done
rmmod kjit || echo CAPTURE-FAIL rmmod
dmesg > dmesg.txt
cat /proc/sys/kernel/tainted > tainted.txt
echo CAPTURE-GUEST-DONE
sync
GUEST

rc=0
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/capture-guest.sh" --smp 2 --timeout 900 || rc=$?
fail=0
bad() { echo "capture-suite: FAIL: $*" >&2; fail=1; }
[ "$rc" = 0 ] || bad "guest script status $rc"
grep -q CAPTURE-GUEST-DONE "$share/guest.log" 2>/dev/null || bad "guest did not finish"
if grep -E 'Oops:|BUG:|kernel BUG|WARNING:|soft lockup|hard LOCKUP|general protection|Kernel panic' \
     "$share/console.log" "$share/dmesg.txt" 2>/dev/null >&2; then
  bad "kernel log has error lines"
fi
pass=0; total=0
for s in $SYSCALLS; do
  total=$((total + 1))
  f="$share/caps/$s.kjitcap"
  if [ ! -f "$f" ]; then echo "$s: NO CAPTURE ($(tail -2 "$share/caps/$s.log" 2>/dev/null | tr '\n' ' '))"; continue; fi
  if out=$("$sim" replay "$f" 2>&1); then
    pass=$((pass + 1)); echo "$s: REPLAY OK $(stat -c %s "$f") bytes; $(echo "$out" | grep '^summary' || true)"
  else
    echo "$s: REPLAY FAILED ($(stat -c %s "$f") bytes)"; echo "$out" | sed 's/^/    /' | head -20
  fi
done
grep "^overhead" "$share/guest.log" || true
if [ -n "${KJIT_CAPTURE_KEEP:-}" ]; then mkdir -p "$KJIT_CAPTURE_KEEP"; cp "$share"/caps/*.kjitcap "$KJIT_CAPTURE_KEEP"/; fi
echo "capture-suite: $pass of $total system calls replay exactly (need $MIN)"
[ "$pass" -ge "$MIN" ] || fail=1
exit "$fail"
