#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once, cached) the full Debian 12 root tests/guest/debian-packages.sh
# boots: what a kernel engineer's server has before installing kjit
# (systemd, dkms, build-essential, the pinned kernel's image and headers),
# plus EXTRA packages (the runtime dependencies of the kjit packages, which
# the guest cannot download: it has no network).  Packed into an ext4 image
# (mkfs.ext4 -d, no mount) that the test boots with -snapshot.
# The root runs /usr/local/sbin/kjit-guest-run once at boot (a systemd unit):
# it mounts the disk labelled "kjit", runs its run.sh, writes done, powers off.
# Usage: tests/guest/debian-root.sh CACHE_DIR [EXTRA_PKG...]  -> prints CACHE_DIR/root.img
# Rebuilt when this script or the package list changes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/../../tools/lab/abi.sh"
cache="$1"; shift
mkdir -p "$cache"; cache="$(cd "$cache" && pwd)"
rootfs="$cache/rootfs" img="$cache/root.img"
pkgs=(systemd-sysv udev kmod dkms build-essential openssl
      "linux-image-$ABI" "linux-headers-$ABI" "$@")
stamp="$(cat "$0"; printf '%s\n' "${pkgs[@]}")"
stamp="$(printf '%s' "$stamp" | sha256sum | cut -c1-16)"
[ "$(cat "$cache/stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$img" ] && { echo "$img"; exit 0; }
export DEBIAN_FRONTEND=noninteractive

if [ ! -x "$rootfs/usr/bin/apt-get" ]; then
  command -v debootstrap >/dev/null || apt-get install -y debootstrap >&2
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian \
    >"$cache/debootstrap.log" 2>&1 || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
fi
# The host's Debian sources, deb entries only, in either format (one-line
# sources.list and *.list, deb822 *.sources): the pinned kernel's packages
# come from bookworm-security as well as bookworm.
mkdir -p "$rootfs/etc/apt/sources.list.d"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ ! -f "$f" ] || grep -hE '^[[:space:]]*deb[[:space:]]' "$f" || true
done > "$rootfs/etc/apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources; do
  [ ! -f "$f" ] || awk 'BEGIN{RS=""; ORS="\n\n"} /Types: deb([^-]|$)/' "$f"
done > "$rootfs/etc/apt/sources.list.d/debian.sources"
if [ ! -s "$rootfs/etc/apt/sources.list" ] && [ ! -s "$rootfs/etc/apt/sources.list.d/debian.sources" ]; then
  echo "debian-root: no deb entry in /etc/apt/sources.list, sources.list.d/*.list or *.sources" >&2; exit 1
fi
mount -t proc proc "$rootfs/proc"
trap 'umount "$rootfs/proc"' EXIT
{
  chroot "$rootfs" apt-get update
  chroot "$rootfs" apt-get install -y --no-install-recommends "${pkgs[@]}"
  chroot "$rootfs" apt-get clean
} >"$cache/apt.log" 2>&1 || { tail -30 "$cache/apt.log" >&2; exit 1; }
rm -rf "$rootfs"/var/lib/apt/lists/*
umount "$rootfs/proc"; trap - EXIT

# A server's configuration, with nothing the test does not need running.
echo kjit-guest > "$rootfs/etc/hostname"
echo '/dev/nvme0n1 / ext4 rw,errors=remount-ro 0 1' > "$rootfs/etc/fstab"
chroot "$rootfs" passwd -d root >/dev/null
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
         fstrim.timer getty@tty1.service systemd-timesyncd.service; do
  ln -sfn /dev/null "$rootfs/etc/systemd/system/$u"
done
cat > "$rootfs/usr/local/sbin/kjit-guest-run" <<'EOF'
#!/bin/sh
# Runs the host's test script from the disk labelled kjit, then powers off.
mkdir -p /mnt/kjit
mount "$(blkid -L kjit)" /mnt/kjit || { echo "kjit-guest-run: no kjit disk" > /dev/ttyS0; poweroff -f; }
cd /mnt/kjit && sh ./run.sh > guest.log 2>&1
echo $? > /mnt/kjit/done
cd / && sync && umount /mnt/kjit; sync
poweroff -f
EOF
chmod 755 "$rootfs/usr/local/sbin/kjit-guest-run"
cat > "$rootfs/etc/systemd/system/kjit-guest-run.service" <<'EOF'
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
EOF
ln -sfn /etc/systemd/system/kjit-guest-run.service \
  "$rootfs/etc/systemd/system/multi-user.target.wants/kjit-guest-run.service"

rm -f "$img"
kb="$(du -sk "$rootfs" | cut -f1)"
# Room for the DKMS build, the debug vmlinux (copied in by the test) and
# the recordings.
truncate -s "$(( kb / 1024 + 2048 ))M" "$img.tmp"
mkfs.ext4 -q -F -L kjitroot -E root_owner=0:0 -d "$rootfs" "$img.tmp"
mv "$img.tmp" "$img"
echo "$stamp" > "$cache/stamp"
echo "$img"
