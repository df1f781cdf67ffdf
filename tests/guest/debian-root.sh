#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once, cached) the full Debian 12 root tests/guest/debian-packages.sh
# boots: what a kernel engineer's server has before installing kjit
# (systemd, dkms, build-essential, the pinned kernel's image and headers),
# plus EXTRA packages (the runtime dependencies of the kjit packages, which
# the guest cannot download: it has no network).  Packed into an ext4 image
# (tools/lab/root-image.sh) that the test boots with -snapshot.
# The root runs /usr/local/sbin/kjit-guest-run once at boot (a systemd unit):
# it mounts the disk labelled "kjit", runs its run.sh, writes done, powers off.
# Usage: tests/guest/debian-root.sh CACHE_DIR [EXTRA_PKG...]  -> prints CACHE_DIR/root.img
# Rebuilt when this script or the package list changes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/../../tools/lab/abi.sh"
# shellcheck source=tools/lab/root-image.sh
. "$here/../../tools/lab/root-image.sh"
cache="$1"; shift

# Root without a password, and the unit that runs the test.
guest_run() {
  local rootfs="$1"
  chroot "$rootfs" passwd -d root >/dev/null
  cat > "$rootfs/usr/local/sbin/kjit-guest-run" <<'EOS'
#!/bin/sh
# Runs the host's test script from the disk labelled kjit, then powers off.
mkdir -p /mnt/kjit
mount "$(blkid -L kjit)" /mnt/kjit || { echo "kjit-guest-run: no kjit disk" > /dev/ttyS0; poweroff -f; }
cd /mnt/kjit && sh ./run.sh > guest.log 2>&1
echo $? > /mnt/kjit/done
cd / && sync && umount /mnt/kjit; sync
poweroff -f
EOS
  chmod 755 "$rootfs/usr/local/sbin/kjit-guest-run"
  root_unit "$rootfs" kjit-guest-run.service <<'EOS'
[Unit]
Description=kjit guest test (tests/guest/debian-packages.sh)
After=basic.target systemd-udev-settle.service
Wants=systemd-udev-settle.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/kjit-guest-run
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
EOS
}

# Room for the DKMS build, the debug vmlinux (copied in by the test) and
# the recordings.
root_image "$cache" bookworm \
  --apt "systemd-sysv udev kmod dkms build-essential openssl linux-image-$ABI linux-headers-$ABI $*" \
  --systemd kjit-guest --configure guest_run --label kjitroot --room 2048
