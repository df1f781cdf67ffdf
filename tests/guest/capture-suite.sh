#!/bin/bash
# Capture/replay suite.  Usage: tests/guest/capture-suite.sh [BUILD_DIR]
#   Needs BUILD_DIR/module/kjit.ko and BUILD_DIR/os/userspace-sim/kjit-sim.
#   Env: KJIT_CAPTURE_SYSCALLS (the list below: NAME, or CASE=NAME for
#        capture_workload's CASE making system call NAME), KJIT_CAPTURE_KEEP=DIR (copy the
#        captures there), KJIT_CAPTURE_MIN (passing replays required, default:
#        all but one, see below).
# In the guest (tests/guest/capture-guest.sh): insmod kjit.ko, then for each system call
#   kjitctl capture --syscall NAME --count 4 --first-complete -o caps/NAME.kjitcap \
#           -- ./capture_workload NAME 4
# (the first of the workload's 4 invocations that returned inside the code
# cache is kept).  The *_wait and *sleep cases block: the capture follows
# them through the sleep and records where each sleep continued (RESUME),
# and the replay skips the scheduler there.  On the host every
# capture is replayed: kjit-sim replay FILE must exit 0 (block sequence, reads,
# writes, return value, and icount/bbcount/calltrace equal to the kernel's).
# Prints one line per system call and a summary; fails when fewer than
# KJIT_CAPTURE_MIN (default: all but one) replay exactly or the kernel log
# has errors, or a guest step printed CAPTURE-FAIL (insmod, rmmod).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
SYSCALLS="${KJIT_CAPTURE_SYSCALLS:-getppid getpid getuid umask newuname read write pipe2 openat close newfstat lseek dup fcntl ioctl brk mprotect munmap kill rt_sigaction rt_sigprocmask socket getsockname sendto recvfrom poll epoll_create1 clock_gettime clock_getres gettimeofday timerfd_create timerfd_settime getitimer times sysinfo getrusage getcwd read_wait=read nanosleep clock_nanosleep futex_wait=futex futex_wake=futex getrandom}"
# All but one must replay.  A recorder that logs a load's value at the wrong
# moment lets a timer tick change what the kernel saw (the timekeeper's
# seqcount), and the replay then retries a loop the kernel did not; plain
# loads are logged after they ran (os/linux/capture.c), but nothing proves
# that window is closed on every path, so one failure is allowed.  Each
# failure prints its first problem.
read -r -a syscalls <<< "$SYSCALLS"
MIN="${KJIT_CAPTURE_MIN:-$((${#syscalls[@]} - 1))}"
ko="$B/module/kjit.ko"
sim="$B/os/userspace-sim/kjit-sim"
[ -f "$ko" ] || { echo "capture-suite: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
[ -x "$sim" ] || { echo "capture-suite: $sim missing (cmake --build $B --target kjit-sim)" >&2; exit 2; }

# shellcheck source=tests/guest/share.sh
. "$root/tests/guest/share.sh"
share="$B/guest-capture"
share_new "$share"
mkdir -p "$share/caps"
share_kjit "$share" "$ko" "$root"
share_program "$share" capture_workload "$root/tests/guest/capture_workload.c"
share_script "$share" "$root/tests/guest/capture-guest.sh" \
  SYSCALLS="$SYSCALLS" OVERHEAD_SYSCALLS="getppid newuname getrusage"

rc=0
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --timeout 900 || rc=$?
fail=0
bad() { echo "capture-suite: FAIL: $*" >&2; fail=1; }
[ "$rc" = 0 ] || bad "guest script status $rc"
grep -q CAPTURE-GUEST-DONE "$share/guest.log" 2>/dev/null || bad "guest did not finish"
if grep CAPTURE-FAIL "$share/guest.log" >&2; then bad "a guest step failed"; fi
if "$root/tools/lab/kernel-log-errors.sh" "$share/console.log" "$share/dmesg.txt" >&2; then
  bad "kernel log has error lines"
fi
pass=0; total=0
for e in "${syscalls[@]}"; do
  s="${e%%=*}"
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
