#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages on a real Debian 12 system: one boot of a full root
# (tests/guest/debian-root.sh: systemd, dkms, build-essential, the pinned
# kernel's image and headers) with KASLR on, where the guest installs the
# two .debs from files, DKMS builds and signs kjit.ko, and README.md's
# "Using kjit on a real machine" lines run verbatim (extracted here from
# between its guest.debian_packages markers), then the purge, checked to
# leave nothing (tests/guest/debian-packages-guest.sh).  One boot does it
# all: DKMS builds for the running kernel, so no reboot is needed to load.
# Usage: tests/guest/debian-packages.sh [BUILD_DIR]
#   Packages: BUILD_DIR/packages (tools/package.sh, run here if missing).
#   Root image cached in BUILD_DIR/lab/debian-root; the debug vmlinux from
#   tools/lab/fetch-debug.sh.  Prints the time of each phase.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
export KJIT_BUILD="${KJIT_BUILD:-$B/lab}"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
# shellcheck source=tests/guest/verdict.sh
. "$root/tests/guest/verdict.sh"
verdict_begin debian_packages
t_start=$(date +%s)
phase() { echo "debian_packages: $1: $(( $(date +%s) - ${2:-$t_start} ))s"; }

pk="$B/packages"
if ! ls "$pk"/kjit-dkms_*.deb "$pk"/kjit_*.deb >/dev/null 2>&1; then
  t=$(date +%s); "$root/tools/package.sh" "$B" >/dev/null; phase "package build" "$t"
fi
dkms_deb="$(ls "$pk"/kjit-dkms_*.deb)" tools_deb="$(ls "$pk"/kjit_*.deb)"

# The guest has no network: the root holds every dependency of the two
# packages beforehand (dkms is in it anyway).
read -r -a deps <<< "$(dpkg-deb -f "$tools_deb" Depends | tr ',' '\n' | sed 's/[|(].*//; s/ //g' | grep . | sort -u | tr '\n' ' ')"
t=$(date +%s)
img="$("$root/tests/guest/debian-root.sh" "$KJIT_BUILD/debian-root" "${deps[@]}" | tail -n1)"
phase "root image (cached after the first run)" "$t"
kdir="$("$root/tools/lab/fetch-kernel.sh" "$KJIT_BUILD/kernel" | tail -n1)"
dbg="$("$root/tools/lab/fetch-debug.sh" | tail -n1)"

# The share: the packages, the debug vmlinux, the README's lines.
t=$(date +%s)
share="$B/guest-debian-packages"
rm -rf "$share"; mkdir -p "$share/debs"
cp "$dkms_deb" "$tools_deb" "$share/debs/"
ln "$dbg/vmlinux-dbg" "$share/vmlinux-dbg" 2>/dev/null || cp "$dbg/vmlinux-dbg" "$share/vmlinux-dbg"
readme_block() {
  awk -v want="$1" '
    /^<!-- guest.debian_packages: / { on = ($3 == want); fence = 0; next }
    on && /^```/ { if (fence) exit; fence = 1; next }
    on && fence { print }' "$root/README.md"
}
readme_block install > "$share/readme-install.txt"
readme_block remove > "$share/readme-remove.txt"
grep -q '^apt-get install ./kjit-dkms_\*.deb ./kjit_\*.deb$' "$share/readme-install.txt" \
  || verdict_bad "README.md: no 'apt-get install ./kjit-dkms_*.deb ./kjit_*.deb' between the install markers"
grep -q '^apt-get purge' "$share/readme-remove.txt" || verdict_bad "README.md: no apt-get purge between the remove markers"
cp "$root/tests/guest/guest-lib.sh" "$share/"
cp "$root/tests/guest/debian-packages-guest.sh" "$share/run.sh"
used_kb="$(du -sk "$share" | cut -f1)"
disk="$B/guest-debian-packages.img"
rm -f "$disk"; truncate -s "$(( used_kb / 1024 + 256 ))M" "$disk"
mkfs.ext4 -q -F -L kjit -E root_owner=0:0 -d "$share" "$disk"
phase "kernel, debug vmlinux, share disk" "$t"

# One boot, KASLR on (Debian's default: no nokaslr), root on NVMe (built
# into the cloud kernel), the root image read-only underneath (-snapshot).
# Single-threaded TCG and -cx16, as tools/lab/run-guest.sh says why.
qemu=(qemu-system-x86_64 -accel "tcg,thread=single" -cpu "max,-cx16" -smp 2 -m 2048
      -nographic -no-reboot -nic none -kernel "$kdir/vmlinuz"
      -append "root=/dev/nvme0n1 rw console=ttyS0 panic=-1 quiet sysrq_always_enabled"
      -drive "file=$img,if=none,format=raw,id=root,snapshot=on"
      -device "nvme,drive=root,serial=kjitroot"
      -drive "file=$disk,if=none,format=raw,id=share,cache=unsafe"
      -device "nvme,drive=share,serial=kjit")
rc=0
exec 9>"${KJIT_QEMU_LOCK:-/tmp/kjit-qemu.lock}"
t=$(date +%s)
flock 9
phase "waiting for the machine's QEMU lock" "$t"
t=$(date +%s)
timeout -k 5 "${KJIT_DEBIAN_TIMEOUT:-1500}" "${qemu[@]}" </dev/null >"$share/console.log" 2>&1 || rc=$?
exec 9>&-
phase "guest boot to poweroff" "$t"
out="$(mktemp -d)"
debugfs -R "rdump / $out" "$disk" >/dev/null 2>&1 || verdict_bad "could not read back the share image"
cp -a "$out"/. "$share"/ 2>/dev/null; rm -rf "$out" "$disk" "$share/vmlinux-dbg"
if [ ! -f "$share/done" ]; then
  verdict_bad "the guest wrote no done (qemu status $rc); the console's last lines:"
  tail -n 30 "$share/console.log" >&2
  rc=125
fi
[ ! -f "$share/steps.txt" ] || sed 's/^/debian_packages: README line: status /' "$share/steps.txt"
[ ! -f "$share/times.txt" ] || sed 's/^/debian_packages: guest time: /' "$share/times.txt"
VERDICT_LOG_UNTIL='kjit-test: lockdown' VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" DEBIAN-PACKAGES-DONE
phase total
verdict_end; exit $?
