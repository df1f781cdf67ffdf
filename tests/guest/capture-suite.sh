#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Capture/replay suite.  Usage: tests/guest/capture-suite.sh [BUILD_DIR]
#   The statx capture alone, then its gdb session on the host:
#     KJIT_CAPTURE_SYSCALLS=statx KJIT_CAPTURE_ALL= KJIT_CAPTURE_ALL_NAMES= tests/guest/capture-suite.sh build
#   Needs BUILD_DIR/module/kjit.ko and BUILD_DIR/tools/kjit-sim/kjit-sim.
#   Env: KJIT_CAPTURE_SYSCALLS (the list below: NAME, or CASE=NAME for
#        capture_workload's CASE making system call NAME), KJIT_CAPTURE_KEEP=DIR (copy the
#        captures there), KJIT_CAPTURE_MIN (passing replays required, default:
#        all), KJIT_CAPTURE_ALL (the all-syscalls workloads,
#        DIR=COMMAND with `+` for spaces; empty: none), KJIT_CAPTURE_ALL_FLAGS
#        (more `kjitctl capture --all-syscalls` options), KJIT_CAPTURE_ALL_NAMES
#        (the system calls the all-syscalls workloads must record and replay,
#        one per line; default tests/data/capture-all-syscalls.txt, empty:
#        none, for other workloads): see below.
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
# KJIT_CAPTURE_MIN (default: all) replay exactly or the kernel log
# has errors, or a guest step printed CAPTURE-FAIL (insmod, rmmod).
#
# Then, without a list: for each workload (capture_workload all, and
# broad_workload: processes, files, memory, IPC, sockets, time, signals,
# polling and blocking calls)
#   kjitctl capture --all-syscalls -o caps/DIR -- COMMAND
# keeps the first complete invocation of every distinct system call it made.
# Every file is replayed; one line per distinct system call name over both
# workloads: REPLAY OK, REPLAY FAILED with its first problem, or NO COMPLETE
# INVOCATION with kjitctl's reason (exit and exit_group, which never
# return, are not attached).  A name captured by both counts once and passes only
# if every capture of it replays.  Fails when any recorded name does not
# replay (all of them must), when a name of KJIT_CAPTURE_ALL_NAMES (the
# pinned list, 250 or more) was not recorded and replayed (the missing ones
# are named), when an entry ran natively while a full code cache was
# reclaimed (what it called went unrecorded, so the recorded set would
# depend on timing), kjitctl failed, or broad_workload reported a failing call.
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
SYSCALLS="${KJIT_CAPTURE_SYSCALLS:-getppid getpid getuid umask newuname read write pipe2 openat close newfstat lseek dup fcntl ioctl brk mprotect munmap kill rt_sigaction rt_sigprocmask socket getsockname sendto recvfrom poll epoll_create1 clock_gettime clock_getres gettimeofday timerfd_create timerfd_settime getitimer times sysinfo getrusage getcwd read_wait=read nanosleep clock_nanosleep futex_wait=futex futex_wake=futex getrandom statx}"
ALL_WORKLOADS="${KJIT_CAPTURE_ALL-suite=./capture_workload+all broad=./broad_workload}"
ALL_NAMES="${KJIT_CAPTURE_ALL_NAMES-$root/tests/data/capture-all-syscalls.txt}"
read -r -a syscalls <<< "$SYSCALLS"
MIN="${KJIT_CAPTURE_MIN:-${#syscalls[@]}}"
sim="$B/tools/kjit-sim/kjit-sim"
host_kjit capture-suite
[ -x "$sim" ] || { echo "capture-suite: $sim missing (cmake --build $B --target kjit-sim)" >&2; exit 2; }

share="$B/guest-capture"
share_new "$share"
mkdir -p "$share/caps"
share_kjit "$share" "$ko" "$root"
share_program "$share" capture_workload
share_program "$share" broad_workload
share_script "$share" "$root/tests/guest/capture-guest.sh" \
  SYSCALLS="$SYSCALLS" OVERHEAD_SYSCALLS="getppid newuname getrusage" \
  ALL_WORKLOADS="$ALL_WORKLOADS" ALL_TIMEOUT=900 ALL_FLAGS="${KJIT_CAPTURE_ALL_FLAGS:-}"

rc=0
# Room for the all-syscalls captures (hundreds of files) in the share disk.
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --tcg-single --timeout 3000 \
  --disk-mb 3072 || rc=$?
verdict_begin capture-suite
bad() { verdict_bad "$@"; }
# no checks.txt: a guest step that fails says CAPTURE-FAIL; the captures
# are judged here, by replaying them
verdict_status "$share" "$rc"
verdict_done "$share" CAPTURE-GUEST-DONE
if grep CAPTURE-FAIL "$share/guest.log" >&2; then bad "a guest step failed"; fi
verdict_kernel_log "$share"
verdict_taint "$share"
# Every capture is replayed first, one replay per core (hundreds of files):
# FILE.replay holds the output, FILE.rc the status.
# shellcheck disable=SC2016  # $0 and $1 are the inner shell's
find "$share/caps" -name '*.kjitcap' -print0 |
  xargs -0 -r -n1 -P"$(nproc)" sh -c 'timeout 600 "$0" replay "$1" > "$1.replay" 2>&1; echo $? > "$1.rc"' "$sim"
replayed() { [ "$(cat "$1.rc" 2>/dev/null)" = 0 ]; }

pass=0; total=0
for e in "${syscalls[@]}"; do
  s="${e%%=*}"
  total=$((total + 1))
  f="$share/caps/$s.kjitcap"
  if [ ! -f "$f" ]; then echo "$s: NO CAPTURE ($(tail -2 "$share/caps/$s.log" 2>/dev/null | tr '\n' ' '))"; continue; fi
  out=$(cat "$f.replay")
  if replayed "$f"; then
    pass=$((pass + 1)); echo "$s: REPLAY OK $(stat -c %s "$f") bytes; $(echo "$out" | grep '^summary' || true)"
  else
    echo "$s: REPLAY FAILED ($(stat -c %s "$f") bytes)"; echo "$out" | sed 's/^/    /' | head -20 || true
  fi
done
grep "^overhead" "$share/guest.log" || true
if [ -n "${KJIT_CAPTURE_KEEP:-}" ]; then
  mkdir -p "$KJIT_CAPTURE_KEEP"
  cp "$share"/caps/*.kjitcap "$KJIT_CAPTURE_KEEP"/ 2>/dev/null || true
  for w in $ALL_WORKLOADS; do cp -r "$share/caps/${w%%=*}" "$KJIT_CAPTURE_KEEP"/ 2>/dev/null || true; done
fi
# A capture names where the kernel image ran: its entry minus the KASLR
# offset is in the vmlinux's function (past its ftrace call).
dbg="$("$root/tools/lab/fetch-debug.sh")"
if [ -f "$share/caps/getppid.kjitcap" ]; then
  want=$(nm "$dbg/vmlinux-dbg" | awk '$3 == "__x64_sys_getppid" {a = $1} END {print a}')
  got=$("$sim" info "$share/caps/getppid.kjitcap" 2>&1 | sed -n 's/^kaslr: .*entry in the vmlinux: 0x\([0-9a-f]*\)$/\1/p')
  if [ -n "$want" ] && [ -n "$got" ] && [ $((0x$got - 0x$want)) -ge 0 ] && [ $((0x$got - 0x$want)) -lt 16 ]; then
    echo "capture-suite: getppid's capture: entry 0x$got in the vmlinux's __x64_sys_getppid (0x$want)"
  else
    bad "getppid's capture names its entry in the vmlinux as 0x${got:-?}, the vmlinux has 0x${want:-?}"
  fi
fi
# The statx capture in gdb on this host (tests/sim/gdb_session.py: break,
# locals against the log, step into a call, finish, reverse-stepi and
# reverse-continue to the same registers, a watchpoint both ways, the exit
# code; the translated view too).  The capture names its kernel (release,
# build id); kjit-sim finds the debug vmlinux where Debian installs it,
# here a debug root whose /usr/lib/debug/boot/vmlinux-RELEASE is the lab's.
if [ -f "$share/caps/statx.kjitcap" ]; then
  rel=$("$sim" info "$share/caps/statx.kjitcap" | sed -n 's/^kernel: *\([^,]*\),.*/\1/p')
  droot="$share/debug-root"
  mkdir -p "$droot/usr/lib/debug/boot"
  ln -sfn "$dbg/vmlinux-dbg" "$droot/usr/lib/debug/boot/vmlinux-$rel"
  if [ -z "$rel" ]; then
    bad "statx's capture does not name its kernel (no KERNEL section)"
  elif KJIT_DEBUG_ROOT="$droot" python3 "$root/tests/sim/gdb_session.py" "$sim" "$share/caps/statx.kjitcap" \
       --vmlinux auto --translated-too > "$share/caps/statx.gdb" 2>&1 &&
     grep -q "found by the capture's kernel $rel" "$share/caps/statx.gdb"; then
    echo "capture-suite: statx in gdb: $(tail -n 1 "$share/caps/statx.gdb")"
  else
    sed 's/^/    /' "$share/caps/statx.gdb" | grep -v '^    ok ' | head -60
    bad "statx's capture in gdb (vmlinux-$rel found from the capture): see $share/caps/statx.gdb"
  fi
fi
echo "capture-suite: $pass of $total system calls replay exactly (need $MIN)"
[ "$pass" -ge "$MIN" ] || bad "fewer than $MIN system calls replay exactly"

# ---- all-syscalls: every distinct system call of the workloads ----------
# Per name: failed (the first failing capture's first problem), ok (the
# workloads whose capture replayed), none (kjitctl's reasons).
declare -A failed ok none
for w in $ALL_WORKLOADS; do
  d="${w%%=*}"
  log="$share/caps/$d.log"
  if [ ! -f "$log" ]; then bad "all-syscalls $d: no log (the guest did not get there)"; continue; fi
  grep -E "^workload:|^capture all-syscalls:|^engine:|broad_workload: (FAIL|skip)" "$log" | sed "s/^/all-syscalls $d: /"
  grep -q "^rc 0$" "$log" || bad "all-syscalls $d: kjitctl capture failed ($(grep '^rc' "$log"))"
  if grep -q "^capture all-syscalls: .* ran natively while a full code cache was reclaimed" "$log"; then
    bad "all-syscalls $d: entries ran natively, unrecorded, while a full code cache was reclaimed"
  fi
  if grep -q "broad_workload: FAIL" "$log"; then bad "all-syscalls $d: broad_workload reported failing calls"; fi
  for f in "$share/caps/$d"/*.kjitcap; do
    [ -f "$f" ] || continue
    n="$(basename "$f" .kjitcap)"
    out=$(cat "$f.replay")
    if replayed "$f"; then
      ok[$n]="${ok[$n]:-}${ok[$n]:+ }$d"
    elif [ -z "${failed[$n]:-}" ]; then
      first=$(grep -m1 -E '^ *problem:|^error:' <<< "$out" | sed 's/^ *//' || true)
      failed[$n]="($d) ${first:-$(tail -1 <<< "$out")}"
    fi
  done
  # "capture all-syscalls: N ... recorded, M without a complete invocation: a: 1 attempt, why; b: ..."
  list=$(sed -n 's/^capture all-syscalls: .* without a complete invocation: //p' "$log")
  while IFS= read -r item; do
    item="${item# }"
    [ -n "$item" ] || continue
    n="${item%%:*}"
    none[$n]="${none[$n]:-}${none[$n]:+, }$d:${item#*:}"
  done < <(echo "$list" | tr ';' '\n')
done
all_pass=0; all_total=0; all_none=0
declare -A seen
for n in "${!ok[@]}" "${!failed[@]}" "${!none[@]}"; do seen[$n]=1; done
while IFS= read -r n; do
  [ -n "$n" ] || continue
  if [ -n "${failed[$n]:-}" ]; then
    all_total=$((all_total + 1)); echo "all-syscalls: $n: REPLAY FAILED ${failed[$n]}"
  elif [ -n "${ok[$n]:-}" ]; then
    all_total=$((all_total + 1)); all_pass=$((all_pass + 1)); echo "all-syscalls: $n: REPLAY OK (${ok[$n]})"
  else
    all_none=$((all_none + 1)); echo "all-syscalls: $n: NO COMPLETE INVOCATION (${none[$n]})"
  fi
done < <(printf '%s\n' "${!seen[@]}" | sort)
if [ -n "$ALL_WORKLOADS" ]; then
  echo "capture-suite: all-syscalls: $all_pass of $all_total distinct system calls replay exactly" \
       "(need all; $all_none more had no complete invocation)"
  [ "$all_total" -gt 0 ] || bad "all-syscalls: no system call captured"
  [ "$all_pass" = "$all_total" ] || bad "all-syscalls: $((all_total - all_pass)) recorded system calls do not replay"
fi
if [ -n "$ALL_NAMES" ]; then
  pinned=0; missing=()
  while read -r n; do
    pinned=$((pinned + 1))
    [ -n "${ok[$n]:-}" ] && [ -z "${failed[$n]:-}" ] || missing+=("$n")
  done < <(sed 's/#.*//; /^[[:space:]]*$/d' "$ALL_NAMES")
  echo "capture-suite: all-syscalls: $((pinned - ${#missing[@]})) of the $pinned system calls of" \
       "${ALL_NAMES#"$root"/} recorded and replayed"
  # the claim the README makes
  [ "$ALL_NAMES" != "$root/tests/data/capture-all-syscalls.txt" ] || [ "$pinned" -ge 250 ] ||
    bad "all-syscalls: ${ALL_NAMES#"$root"/} pins $pinned system calls, fewer than 250"
  [ "${#missing[@]}" = 0 ] || bad "all-syscalls: not recorded and replayed (${ALL_NAMES#"$root"/}): ${missing[*]}"
fi
verdict_end; exit $?
