#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the pinned kernel under QEMU/TCG with a busybox initramfs, run a script
# in the guest against a shared directory, and collect the results.
#
# Usage: tools/lab/run-guest.sh --share DIR --script SCRIPT [--smp 2] [--mem 1024]
#          [--append EXTRA] [--timeout SECS] [--disk-mb MB] [--initrd FILE]
#          [--tcg-single] [--nokaslr] [--cpu MODEL] [--verbose] [--shell]
#
# SCRIPT is copied to DIR/run.sh; the guest runs it as root with cwd
# /mnt/kjit (= DIR), so it can e.g. `insmod ./foo.ko` and write result files.
# Share mechanics: the cloud kernel has no 9p, so DIR is packed into an ext4
# image (mkfs.ext4 -d), attached as an NVMe disk (built into the kernel), and
# after poweroff every file in the image is copied back into DIR (debugfs
# rdump; files deleted in the guest are not deleted in DIR).
# --tcg-single runs both vCPUs on one host thread (-accel tcg,thread=single);
# the default is multi-threaded TCG.  QEMU 7.2's multi-threaded TCG can keep
# executing a stale int3 after the kernel's text_poke_bp has replaced it, so
# tests that patch kernel text while other vCPUs run need the single thread.
# The kernel boots with KASLR, as Debian's does; --nokaslr is for the one
# experiment that needs the link-time addresses as run-time ones
# (extract-kallsyms.sh reads the vmlinux's own addresses from kallsyms).
# --cpu MODEL is QEMU's CPU model (default KJIT_GUEST_CPU, else max).
# QEMU's max answers "Not affected" to every speculation check, so the
# kernel patches in none of its return or indirect-branch thunks; a real
# model (EPYC-Rome, Cascadelake-Server-v4) makes it choose mitigations
# as on that hardware (TCG warns about the features it lacks, and boots).
# /init prints the choice: "kjit-init: vulnerability NAME: ..." lines.
# Outputs: DIR/console.log (serial), DIR/guest.log (script stdout+stderr),
#          DIR/done (script exit status, written by the guest).
# Exit status: the script's exit status; 124 on timeout; 125 if the guest
# did not write DIR/done (crash/panic/hang); 2 on usage errors.
# Env: KJIT_BUILD (default ./build/lab) caches kernel and initramfs;
#      KJIT_GUEST_CPU (default max) the CPU model, as --cpu.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="${KJIT_BUILD:-$PWD/build/lab}"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"

share="" script="" smp=2 mem=1024 extra="" tmo=300 disk_mb="" initrd="" verbose=0 shell=0 accel=tcg
model="${KJIT_GUEST_CPU:-max}"
while [ $# -gt 0 ]; do
  case "$1" in
    --share) share="$2"; shift 2 ;;
    --script) script="$2"; shift 2 ;;
    --smp) smp="$2"; shift 2 ;;
    --mem) mem="$2"; shift 2 ;;
    --append) extra="$extra $2"; shift 2 ;;
    --timeout) tmo="$2"; shift 2 ;;
    --disk-mb) disk_mb="$2"; shift 2 ;;
    --initrd) initrd="$2"; shift 2 ;;
    --tcg-single) accel=tcg,thread=single; shift ;;
    --nokaslr) extra="$extra nokaslr"; shift ;;
    --cpu) model="$2"; shift 2 ;;
    --verbose|-v) verbose=1; shift ;;
    --shell) shell=1; shift ;;
    -h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
    *) echo "run-guest: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$share" ] || { echo "run-guest: --share DIR is required" >&2; exit 2; }
[ "$shell" = 1 ] || [ -n "$script" ] || { echo "run-guest: --script is required" >&2; exit 2; }
mkdir -p "$share"
share="$(cd "$share" && pwd)"

# Cached artifacts.
kdir="$("$here/fetch-kernel.sh" "$BUILD/kernel" | tail -n1)"
[ -n "$initrd" ] || initrd="$(KJIT_BUILD="$BUILD" "$here/initramfs.sh" "$kdir")"

[ -z "$script" ] || { [ "$(realpath "$script")" = "$share/run.sh" ] || cp "$script" "$share/run.sh"; }
[ -z "$script" ] || chmod +x "$share/run.sh"
rm -f "$share/done" "$share/console.log" "$share/guest.log" "$share/hang.txt"

# Pack the share into an ext4 image (sparse; room for guest output).
work="$(mktemp -d "${TMPDIR:-/tmp}/kjit-guest.XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [ -z "$disk_mb" ]; then
  used_kb="$(du -sk "$share" | cut -f1)"
  disk_mb=$(( used_kb * 2 / 1024 + 512 ))
fi
img="$work/share.img"
truncate -s "${disk_mb}M" "$img"
mkfs.ext4 -q -F -L kjit -E root_owner=0:0 -d "$share" "$img"

append="console=ttyS0 panic=-1 quiet sysrq_always_enabled$extra"
[ "$shell" = 0 ] || append="$append kjit.shell=1"
# -cx16, as in bench/lib/boot.sh: QEMU 7.2's TCG computes cmpxchg16b's
# flags from a stale cc_op (the helper is called without gen_update_cc_op),
# so right after a popfq, which kjit's outlined calls end with, SLUB's
# cmpxchg16b fast path can see garbage flags and the guest double-faults.
# An emulator bug, not a kjit one; without CX16 the kernel takes its
# this_cpu_cmpxchg16b_emu path.  It is TCG's whatever the model.
cpu="$model,-cx16"
qemu=(qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp "$smp" -m "$mem"
      -nographic -no-reboot -nic none
      -kernel "$kdir/vmlinuz" -initrd "$initrd" -append "$append"
      -drive "file=$img,if=none,format=raw,id=kjit,cache=unsafe"
      -device "nvme,drive=kjit,serial=kjit")
# A guest hung with interrupts off prints nothing: shortly before the
# timeout, ask QEMU's monitor where the vCPUs are (DIR/hang.txt).
# With the debug vmlinux (fetch-debug.sh), gdb also unwinds every vCPU
# through QEMU's gdbstub; with the pc histogram that takes some 60 s, so the dump starts 90 s
# before the timeout.
mon="$work/monitor.sock" gdbs="$work/gdb.sock" vmlinux_dbg="$BUILD/debug/vmlinux-dbg"
[ "$shell" = 1 ] || qemu+=(-monitor "unix:$mon,server=on,wait=off")
gdb_args=()
if [ "$shell" = 0 ] && [ -f "$vmlinux_dbg" ] && command -v gdb >/dev/null; then
  qemu+=(-chardev "socket,id=gdbs,path=$gdbs,server=on,wait=off" -gdb chardev:gdbs)
  gdb_args=("$gdbs" "$vmlinux_dbg")
fi
syms="$here/../../tests/data/kallsyms-$ABI.txt.xz"
watch_hang() {
  sleep $(( tmo > 180 ? tmo - 90 : tmo * 3 / 4 ))
  [ -S "$mon" ] && "$here/guest-hang-dump.py" "$mon" "$syms" "$share/console.log" "${gdb_args[@]}" >"$share/hang.txt" 2>&1
}

# The machine's QEMU lock (qemu-lock.sh): one core for single-threaded
# TCG, all of them for multi-threaded.
# shellcheck source=tools/lab/qemu-lock.sh
. "$here/qemu-lock.sh"
qemu_lock_for "$accel"

start=$(date +%s.%N)
rc=0
watcher=""
if [ "$shell" = 0 ]; then watch_hang </dev/null >/dev/null 2>&1 & watcher=$!; fi
if [ "$shell" = 1 ]; then
  "${qemu[@]}" || rc=$?
elif [ "$verbose" = 1 ]; then
  timeout --foreground -k 5 "$tmo" "${qemu[@]}" </dev/null 2>&1 | tee "$share/console.log" || true
  rc=${PIPESTATUS[0]}
else
  timeout -k 5 "$tmo" "${qemu[@]}" </dev/null >"$share/console.log" 2>&1 || rc=$?
fi
end=$(date +%s.%N)
[ -z "$watcher" ] || { pkill -P "$watcher" 2>/dev/null; kill "$watcher" 2>/dev/null; } || true
secs=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')

# Copy the guest's view back into DIR.
out="$work/out"; mkdir -p "$out"
if debugfs -R "rdump / $out" "$img" >/dev/null 2>"$work/debugfs.err"; then
  rm -rf "$out/lost+found"
  # keep the host's console.log; everything else comes from the guest
  rm -f "$out/console.log" "$out/hang.txt"
  cp -a "$out"/. "$share"/
else
  echo "run-guest: could not read back the share image:" >&2; cat "$work/debugfs.err" >&2
fi

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  echo "run-guest: TIMEOUT after ${tmo}s (console: $share/console.log)" >&2
  [ "$verbose" = 1 ] || tail -n 30 "$share/console.log" >&2
  [ ! -s "$share/hang.txt" ] || { echo "run-guest: vCPUs at the timeout ($share/hang.txt):" >&2; cat "$share/hang.txt" >&2; }
  exit 124
fi
if [ ! -f "$share/done" ]; then
  echo "run-guest: guest did not write done (qemu rc=$rc, ${secs}s; console: $share/console.log)" >&2
  [ "$verbose" = 1 ] || tail -n 30 "$share/console.log" >&2
  exit 125
fi
grc="$(tr -d '[:space:]' < "$share/done")"
echo "run-guest: guest finished in ${secs}s, script exit status ${grc:-?}" >&2
exit "${grc:-125}"
