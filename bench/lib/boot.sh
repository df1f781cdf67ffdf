#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the pinned kernel under QEMU/TCG for the bench: like tools/lab/run-guest.sh
# (same initramfs /init protocol, share disk with serial "kjit"), plus
#   --root IMG   a Debian root (ext4) as a second NVMe disk, serial "kjitroot",
#                attached with snapshot=on (guest writes are thrown away)
#   --icount     -icount shift=0,sleep=off (guest clock = guest instructions)
#   --gdb PORT   QEMU's gdbstub on tcp::PORT (bench/profile/entry-path.sh)
# Usage: bench/lib/boot.sh --share DIR --script S [--root IMG] [--icount]
#          [--smp N] [--mem MB] [--timeout SECS] [--append X] [--gdb PORT]
# Exit status: the script's; 124 timeout; 125 no `done` (crash/hang).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$(cd "$here/../.." && pwd)"
lab="$top/tools/lab"
LABBUILD="${KJIT_BUILD:-$top/build/lab}"
share="" script="" root="" icount=0 smp=2 mem=2048 tmo=900 extra="" gdbport=""
while [ $# -gt 0 ]; do
  case "$1" in
    --share) share="$2"; shift 2 ;;
    --script) script="$2"; shift 2 ;;
    --root) root="$2"; shift 2 ;;
    --icount) icount=1; shift ;;
    --gdb) gdbport="$2"; shift 2 ;;
    --smp) smp="$2"; shift 2 ;;
    --mem) mem="$2"; shift 2 ;;
    --timeout) tmo="$2"; shift 2 ;;
    --append) extra="$extra $2"; shift 2 ;;
    *) echo "boot.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$share" ] || [ -z "$script" ]; then echo "boot.sh: --share and --script are required" >&2; exit 2; fi
mkdir -p "$share"; share="$(cd "$share" && pwd)"
kdir="$(KJIT_BUILD="$LABBUILD" "$lab/fetch-kernel.sh" "$LABBUILD/kernel" | tail -n1)"
initrd="$(KJIT_BUILD="$LABBUILD" "$lab/initramfs.sh" "$kdir")"
[ "$(realpath "$script")" = "$share/run.sh" ] || cp "$script" "$share/run.sh"
chmod +x "$share/run.sh"
rm -f "$share/done" "$share/console.log" "$share/guest.log"
work="$(mktemp -d "${TMPDIR:-/tmp}/kjit-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
used_kb="$(du -sk "$share" | cut -f1)"
img="$work/share.img"
truncate -s "$(( used_kb * 2 / 1024 + 256 ))M" "$img"
mkfs.ext4 -q -F -L kjit -E root_owner=0:0 -d "$share" "$img"
# -cx16: QEMU 7.2's TCG computes cmpxchg16b's flags from a stale cc_op
# (translate.c calls the helper without gen_update_cc_op; QEMU 8.0 inlined
# the instruction): right after a popfq, as kjit's outlined calls end with,
# the flags of SLUB's `cmpxchg16b gs:[rdi]` fast path come out as garbage
# (bits from rax) and an interrupt there can double-fault the guest.
# Without CX16 the kernel's SLUB uses its locked path, the same for every
# configuration of a boot.
cpu=max,-cx16
qemu=(qemu-system-x86_64 -accel tcg -cpu "$cpu" -smp "$smp" -m "$mem"
      -nographic -no-reboot -nic none
      -kernel "$kdir/vmlinuz" -initrd "$initrd"
      -append "console=ttyS0 panic=-1 quiet$extra"
      -drive "file=$img,if=none,format=raw,id=kjit,cache=unsafe"
      -device "nvme,drive=kjit,serial=kjit")
[ -z "$root" ] || qemu+=(-drive "file=$root,if=none,format=raw,id=kjitroot,snapshot=on,cache=unsafe"
                         -device "nvme,drive=kjitroot,serial=kjitroot")
icount_opts=shift=0,sleep=off
[ "$icount" = 0 ] || qemu+=(-icount "$icount_opts")
[ -z "$gdbport" ] || qemu+=(-gdb "tcp:127.0.0.1:$gdbport")
# tools/lab/qemu-lock.sh: a wall-clock measurement shares no core; an
# -icount guest (single-threaded TCG) holds one, since its clock counts its
# own instructions whatever runs on the other core.
# shellcheck source=tools/lab/qemu-lock.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/lab/qemu-lock.sh"
if [ "$icount" = 1 ]; then qemu_lock_one; else qemu_lock_all; fi
rc=0
timeout -k 5 "$tmo" "${qemu[@]}" </dev/null >"$share/console.log" 2>&1 || rc=$?
out="$work/out"; mkdir -p "$out"
if debugfs -R "rdump / $out" "$img" >/dev/null 2>"$work/debugfs.err"; then
  rm -rf "$out/lost+found" "$out/console.log"
  cp -a "$out"/. "$share"/
fi
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "boot.sh: TIMEOUT after ${tmo}s" >&2; exit 124; fi
[ -f "$share/done" ] || { echo "boot.sh: no done file (qemu rc=$rc)" >&2; tail -n 20 "$share/console.log" >&2; exit 125; }
exit "$(tr -d '[:space:]' < "$share/done")"
