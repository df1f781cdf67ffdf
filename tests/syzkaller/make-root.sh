#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds (once, cached) the Debian 12 root syz-manager's qemu VMs boot:
# debootstrap minbase with systemd, sshd and iproute2, the pinned cloud
# kernel's modules (virtio_pci and virtio_net, for syzkaller's network
# device), an ssh key for root, DHCP on the user-mode network, /etc/hosts
# with localhost, and a unit that loads kjit.ko and runs `kjitctl kcov
# enable` before sshd starts, unless the kernel command line says
# kjit.syz=off (the baseline run without kjit boots the same image).
# Packed into an ext4 image by tools/lab/root-image.sh.
#
#   tests/syzkaller/make-root.sh CACHE_DIR KJIT_KO KJITCTL KERNEL_DEB
#     -> prints CACHE_DIR/root.img; the key is CACHE_DIR/id_rsa
# Rebuilt when this script, kjit.ko or kjitctl changes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/lab/root-image.sh
. "$here/../../tools/lab/root-image.sh"
cache="$1" ko="$2" kjitctl="$3" kdeb="$4"
mkdir -p "$cache"; cache="$(cd "$cache" && pwd)"
key="$cache/id_rsa"

syz_root() {
  local rootfs="$1" tmp mods v
  # The kernel's modules (its image is booted from the host with -kernel).
  if [ ! -d "$rootfs/lib/modules" ] || [ -z "$(ls "$rootfs/lib/modules")" ]; then
    tmp="$(mktemp -d)"
    dpkg-deb -x "$kdeb" "$tmp"
    mkdir -p "$rootfs/lib/modules"
    # lib/modules or, in a package for the merged /usr layout, usr/lib/modules
    mods="$("$here/../../tools/lab/image-modules.sh" "$tmp")"
    cp -a "$mods"/. "$rootfs/lib/modules/"
    rm -rf "$tmp"
    for v in "$rootfs"/lib/modules/*; do chroot "$rootfs" depmod "$(basename "$v")"; done
  fi
  printf 'virtio_pci\nvirtio_net\n' > "$rootfs/etc/modules-load.d/syz-net.conf"

  printf '127.0.0.1 localhost\n::1 localhost\n127.0.1.1 syzkaller\n' > "$rootfs/etc/hosts"
  cat > "$rootfs/etc/systemd/network/10-syz.network" <<'EON'
[Match]
Name=en* eth*

[Network]
DHCP=ipv4
EON
  ln -sfn /lib/systemd/system/systemd-networkd.service \
    "$rootfs/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"

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
  root_unit "$rootfs" kjit-syz-kcov.service <<'EON'
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
}

# Nothing else running beside the fuzzer (--systemd).
root_image "$cache" bookworm --include systemd-sysv,udev,kmod,openssh-server,iproute2 \
  --systemd syzkaller --configure syz_root --depends "$ko" --depends "$kjitctl" --label syzroot --room 1024
