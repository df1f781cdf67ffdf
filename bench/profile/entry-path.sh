#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where kjit's per-syscall cost goes: boots the pinned kernel (one vCPU,
# QEMU gdbstub), attaches kjit (no tool) to getppid, single-steps whole
# getppid system calls from entry_SYSCALL_64 to sysret through the gdbstub,
# then does the same natively (detached) in the same boot, and breaks the
# instructions down per kernel symbol (the guest's /proc/kallsyms: the
# module, the code cache `kjit-code-cache`, ftrace's trampoline).
# Usage: bench/profile/entry-path.sh [BUILD_DIR]   (needs BUILD_DIR/module/kjit.ko)
# Writes bench/results/entry-path.md.  Env: PROFILE_SAMPLES (7), PROFILE_PORT (12345),
#   PROFILE_KO_ARGS (kjit.ko parameters, e.g. direct_entry=0 for the IPMODIFY path),
#   PROFILE_OUT (default bench/results/entry-path.md), PROFILE_CALL (getppid, or
#   pselect6: lmb's select, syscall_loop.c), PROFILE_BENCH_WARMUP=1 (before the
#   loop, attach every system call the bench attaches and run lmb's benchmarks
#   before select, so the cache holds what it holds when the bench gets there),
#   PROFILE_COLD=1 (kjit's cache flushed before every attached call: the
#   profile of a call that builds everything it runs; SAMPLES 3 and
#   PROFILE_MAX_STEPS 3000000 by default, instead of 7 and 50000).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$(cd "$here/../.." && pwd)"
B="$(cd "${1:-$top/build}" && pwd)"
cold="" max_steps=50000 samples=7
[ "${PROFILE_COLD:-0}" = 1 ] && { cold=cold; max_steps=3000000; samples=3; }
samples="${PROFILE_SAMPLES:-$samples}" max_steps="${PROFILE_MAX_STEPS:-$max_steps}" port="${PROFILE_PORT:-12345}"
command -v gdb >/dev/null || sudo apt-get install -y gdb >/dev/null
[ -f "$B/module/kjit.ko" ] || { echo "entry-path: $B/module/kjit.ko missing (os/linux/build.sh $B)" >&2; exit 2; }
share="$B/profile-entry"; rm -rf "$share"; mkdir -p "$share"
cp "$B/module/kjit.ko" "$share/"
echo "${PROFILE_KO_ARGS:-}" > "$share/ko-args"
call="${PROFILE_CALL:-getppid}"
case "$call" in getppid) nr=110 ;; pselect6) nr=270 ;; *) echo "entry-path: PROFILE_CALL $call?" >&2; exit 2 ;; esac
echo "$call" > "$share/call"
echo "$cold" > "$share/cold"
# The loop's and the boot's time limits, the stepping of every sample inside.
secs=900; [ -n "$cold" ] && secs=3600
echo "$secs" > "$share/secs"
# The bench's list of system calls and lmb's benchmarks before select.
warmup=""
if [ "${PROFILE_BENCH_WARMUP:-0}" = 1 ]; then
  awk '/^SYSCALLS="/ { on = 1; sub(/^SYSCALLS="/, "") } on { if (sub(/".*/, "")) on = 2; print; if (on == 2) exit }' \
    "$top/bench/guest/driver.sh" | tr ' ' '\n' | sed '/^$/d' > "$share/attach-list"
  warmup="null read write stat fstat openclose"
fi
echo "$warmup" > "$share/warmup"
# The loop, lmb and kjitctl are CMake targets (tests/guest/CMakeLists.txt).
cmake --build "$B" --target syscall_loop lmb kjitctl >/dev/null
cp "$B/guest-bin/syscall_loop" "$share/loop"
cp "$B/guest-bin/lmb" "$share/lmb"
cp "$B/guest-bin/kjitctl" "$share/kjitctl"
stop="0x$(nm "$share/loop" | awk '$3 == "kjit_profile_stop" { print $1 }')"
[ "$stop" != 0x ] || { echo "entry-path: kjit_profile_stop not found in loop" >&2; exit 1; }

cat > "$share/guest.sh" <<'GUEST'
#!/bin/sh
set -u
say() { echo "<2>kjit-profile: $*" > /dev/kmsg; }
# shellcheck disable=SC2046  # the parameters are words
insmod ./kjit.ko $(cat ko-args) || { say failed insmod; exit 1; }
./kjitctl config --tool none || { say failed config; exit 1; }
call=$(cat call)
if [ -s attach-list ]; then
  for s in $(cat attach-list); do
    grep -q " __x64_sys_$s\$" /proc/kallsyms && ./kjitctl attach "__x64_sys_$s" >/dev/null
  done
else
  ./kjitctl attach "$call" || { say failed attach; exit 1; }
fi
say "entry 0x$(awk '$3 == "entry_SYSCALL_64" { print $1 }' /proc/kallsyms)"
for b in $(cat warmup); do ./lmb -t 0.15 -f ./lmb "$b" >/dev/null 2>&1 || say "lmb $b failed"; done
./loop 2 "$call"   # warm up: translations built, lookup table filled
say "ready attached"
# shellcheck disable=SC2046  # cold: a word or nothing
./loop "$(cat secs)" "$call" $(cat cold) || say "loop timed out"
./kjitctl stats > stats.txt
./kjitctl detach all
./loop 2 "$call"
say "ready native"
./loop 900 "$call" || say "loop timed out"
cat /proc/kallsyms > kallsyms.txt
rmmod kjit
GUEST

"$top/bench/lib/boot.sh" --share "$share" --script "$share/guest.sh" --smp 1 --gdb "$port" \
  --timeout $((secs * 2 + 600)) > "$share/boot.log" 2>&1 &
boot=$!
wait_for() {  # wait_for PATTERN: the line of the console that has it
  for _ in $(seq 600); do
    grep -a "kjit-profile: failed" "$share/console.log" 2>/dev/null && return 1
    grep -a -m1 "kjit-profile: $1" "$share/console.log" 2>/dev/null && return 0
    kill -0 "$boot" 2>/dev/null || return 1
    sleep 1
  done
  return 1
}
step() {  # step PHASE
  wait_for "ready $1" >/dev/null || { echo "entry-path: guest never got to $1" >&2; kill "$boot"; exit 1; }
  PORT="$port" ENTRY="$entry" NR="$nr" STOP="$stop" SAMPLES="$samples" MAX_STEPS="$max_steps" OUT="$share/$1.txt" \
    timeout "${PROFILE_GDB_TIMEOUT:-3600}" gdb -nx -batch -x "$here/step_syscall.py" > "$share/gdb-$1.log" 2>&1 \
    || { echo "entry-path: gdb failed ($share/gdb-$1.log)" >&2; kill "$boot"; exit 1; }
}
line="$(wait_for "entry 0x")" || { echo "entry-path: guest failed, $share/console.log" >&2; exit 1; }
entry="$(echo "$line" | sed 's/.*entry //' | tr -d '\r')"
step attached
step native
wait "$boot" || { echo "entry-path: guest status $? ($share/boot.log)" >&2; exit 1; }
cache_bytes="0x$(readelf -SW "$share/kjit.ko" | awk '$2 == ".kjit_cache" { print $6 }')"
python3 "$here/symbolize.py" "$share/kallsyms.txt" "$cache_bytes" "$share/attached.txt" "$share/native.txt" \
  > "${PROFILE_OUT:-$top/bench/results/entry-path.md}"
cat "${PROFILE_OUT:-$top/bench/results/entry-path.md}"
