#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once, cached) the Debian guest root for the bench: debootstrap
# --variant=minbase bookworm with nginx-light, wrk, bpftrace and procps from
# Debian's registry, packed into an ext4 image (mkfs.ext4 -d, no mount).
# Usage: bench/lib/make-root.sh CACHE_DIR     -> prints CACHE_DIR/root.img
set -euo pipefail
cache="$1"; mkdir -p "$cache"; cache="$(cd "$cache" && pwd)"
img="$cache/root.img"
if [ ! -x "$cache/rootfs/usr/bin/bpftrace" ] || [ ! -x "$cache/rootfs/usr/sbin/nginx" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap >&2
  rm -rf "$cache/rootfs"
  debootstrap --variant=minbase --include=nginx-light,wrk,bpftrace,procps \
    bookworm "$cache/rootfs" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1
  rm -f "$cache/rootfs"/var/cache/apt/archives/*.deb
  rm -f "$img"
fi
if [ ! -s "$img" ]; then
  mkdir -p "$cache/rootfs/mnt/kjit"
  kb="$(du -sk "$cache/rootfs" | cut -f1)"
  truncate -s "$(( kb / 1024 + 400 ))M" "$img.tmp"
  mkfs.ext4 -q -F -L kjitroot -E root_owner=0:0 -d "$cache/rootfs" "$img.tmp"
  mv "$img.tmp" "$img"
fi
echo "$img"
