#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs under the busybox initramfs (cwd = the share, /mnt/kjit): brings up
# loopback, mounts the Debian root (NVMe serial "kjitroot") at /debian, binds
# the kernel file systems and the share into it, and runs driver.sh there.
set -u
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
dev=""
for c in /sys/class/nvme/nvme*; do
  [ "$(tr -d ' ' < "$c/serial")" = kjitroot ] && dev="/dev/$(basename "$c")n1"
done
[ -n "$dev" ] || { echo "bench: no root disk"; exit 1; }
mkdir -p /debian
mount -t ext4 "$dev" /debian || exit 1
for d in proc sys dev sys/kernel/debug sys/kernel/tracing; do
  mkdir -p "/debian/$d"; mount --bind "/$d" "/debian/$d"
done
mount -t tmpfs tmpfs /debian/tmp
mount -t tmpfs tmpfs /debian/run
mkdir -p /debian/mnt/kjit
mount --bind /mnt/kjit /debian/mnt/kjit
chroot /debian /bin/bash /mnt/kjit/driver.sh
rc=$?
sync
exit $rc
