#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install (idempotently) every Debian package the kjit project needs.
# Usage: tools/lab/deps.sh        (as root; no stdin needed)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
export DEBIAN_FRONTEND=noninteractive

pkgs=(
  build-essential cmake pkg-config
  libzydis-dev libzycore-dev libcapstone-dev libunicorn-dev
  googletest libgtest-dev
  clang libfuzzer-14-dev libclang-rt-14-dev
  lz4 xz-utils qemu-system-x86 qemu-utils busybox-static cpio kmod e2fsprogs gnuplot-nox stress-ng
  dpkg-dev
  shellcheck
  libdw-dev libelf-dev lcov chromium man-db groff-base gdb
  debhelper dh-dkms dkms debootstrap lintian
  # the KCOV anchor kernel's build (kcov-kernel.sh): Kconfig's parser, BTF,
  # the ephemeral module-signing key
  flex bison bc dwarves libssl-dev openssl
)

# The other flavours' and kernel lines' headers, the default one's too when
# KJIT_KERNEL picks another: ./kjit-lab test builds kjit.ko for each of them
# (tests/guest/flavours.sh, tests/guest/kernel-lines.sh).
# Debian 13's headers need its gcc-14: they go into the lab's trixie chroot
# (tools/lab/trixie-chroot.sh, run by os/linux/build.sh), not onto this host.
# A "+kcov" ABI has no headers package: its build tree is its headers (kcov-kernel.sh).
on_host() { case "$1" in *+deb13-*|*+kcov) return 1 ;; esac; }
while read -r f; do [ -z "$f" ] || [ "$f" = "$ABI" ] || ! on_host "$f" || pkgs+=("linux-headers-$f"); done \
  < <(echo "$kjit_default_abi"; cat "$here/../kernel-flavours" "$here/../kernel-lines")

on_host "$ABI" && pkgs+=("linux-headers-$ABI")

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#pkgs[@]} packages already installed"
  exit 0
fi

echo "deps: installing: ${missing[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}" </dev/null; then
  $SUDO apt-get update </dev/null
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}" </dev/null
fi
