#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds (once, cached) the Debian 12 root syz-manager's qemu VMs boot:
# debootstrap minbase with systemd, sshd and iproute2, the pinned cloud
# kernel's modules (virtio_pci and virtio_net, for syzkaller's network
# device), an ssh key for root, DHCP on the user-mode network, /etc/hosts
# with localhost, and a unit that loads kjit.ko and runs `kjitctl kcov
# enable` before sshd starts, unless the kernel command line says
# kjit.syz=off (the baseline run without kjit boots the same image).
#
#   tests/syzkaller/make-root.sh CACHE_DIR KJIT_KO KJITCTL KERNEL_DEB
#     -> prints CACHE_DIR/root.img; the key is CACHE_DIR/id_rsa
# Rebuilt when this script, kjit.ko or kjitctl changes.
set -euo pipefail
cache="$1" ko="$2" kjitctl="$3" kdeb="$4"
mkdir -p "$cache"; cache="$(cd "$cache" && pwd)"
rootfs="$cache/rootfs" img="$cache/root.img" key="$cache/id_rsa"
stamp="$(cat "$0" "$ko" "$kjitctl" | sha256sum | cut -c1-16)"
[ "$(cat "$cache/stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$img" ] && { echo "$img"; exit 0; }

if [ ! -x "$rootfs/usr/sbin/sshd" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap >&2
  rm -rf "$rootfs"
  debootstrap --variant=minbase --include=systemd-sysv,udev,kmod,openssh-server,iproute2 \
    bookworm "$rootfs" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 ||
    { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
  rm -f "$rootfs"/var/cache/apt/archives/*.deb
fi

# The kernel's modules (its image is booted from the host with -kernel).
if [ ! -d "$rootfs/lib/modules" ] || [ -z "$(ls "$rootfs/lib/modules")" ]; then
  tmp="$(mktemp -d)"
  dpkg-deb -x "$kdeb" "$tmp"
  mkdir -p "$rootfs/lib/modules"
  # lib/modules or, in a package for the merged /usr layout, usr/lib/modules
  mods="$("$(dirname "${BASH_SOURCE[0]}")/../../tools/lab/image-modules.sh" "$tmp")"
  cp -a "$mods"/. "$rootfs/lib/modules/"
  rm -rf "$tmp"
  for v in "$rootfs"/lib/modules/*; do chroot "$rootfs" depmod "$(basename "$v")"; done
fi
printf 'virtio_pci\nvirtio_net\n' > "$rootfs/etc/modules-load.d/syz-net.conf"

echo syzkaller > "$rootfs/etc/hostname"
printf '127.0.0.1 localhost\n::1 localhost\n127.0.1.1 syzkaller\n' > "$rootfs/etc/hosts"
echo '/dev/nvme0n1 / ext4 rw,errors=remount-ro 0 1' > "$rootfs/etc/fstab"
cat > "$rootfs/etc/systemd/network/10-syz.network" <<'EON'
[Match]
Name=en* eth*

[Network]
DHCP=ipv4
EON
ln -sfn /lib/systemd/system/systemd-networkd.service \
  "$rootfs/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
# Nothing else running beside the fuzzer.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
         fstrim.timer getty@tty1.service systemd-timesyncd.service; do
  ln -sfn /dev/null "$rootfs/etc/systemd/system/$u"
done

[ -s "$key" ] || ssh-keygen -q -t rsa -b 2048 -N '' -f "$key"
mkdir -p "$rootfs/root/.ssh"
cp "$key.pub" "$rootfs/root/.ssh/authorized_keys"
chmod 700 "$rootfs/root/.ssh"; chmod 600 "$rootfs/root/.ssh/authorized_keys"
# syzkaller logs in as root with the key and copies its binaries to /.
cat > "$rootfs/etc/ssh/sshd_config.d/syz.conf" <<'EON'
PermitRootLogin prohibit-password
UseDNS no
EON

mkdir -p "$rootfs/opt/kjit"
cp "$ko" "$rootfs/opt/kjit/kjit.ko"
cp "$kjitctl" "$rootfs/opt/kjit/kjitctl"
cat > "$rootfs/etc/systemd/system/kjit-syz-kcov.service" <<'EON'
[Unit]
Description=kjit's KCOV device for syzkaller (tests/syzkaller/make-root.sh)
ConditionKernelCommandLine=!kjit.syz=off
DefaultDependencies=no
After=local-fs.target
Before=ssh.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/sbin/insmod /opt/kjit/kjit.ko
ExecStart=/opt/kjit/kjitctl kcov enable
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
EON
ln -sfn /etc/systemd/system/kjit-syz-kcov.service \
  "$rootfs/etc/systemd/system/multi-user.target.wants/kjit-syz-kcov.service"

rm -f "$img"
kb="$(du -sk "$rootfs" | cut -f1)"
truncate -s "$(( kb / 1024 + 1024 ))M" "$img.tmp"
mkfs.ext4 -q -F -L syzroot -E root_owner=0:0 -d "$rootfs" "$img.tmp"
mv "$img.tmp" "$img"
echo "$stamp" > "$cache/stamp"
echo "$img"
