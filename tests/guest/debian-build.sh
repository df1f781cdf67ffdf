#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds kjit's binary packages from its .dsc as README.md tells a user
# to, in a throwaway copy of the debian_packages root (tests/guest/
# debian-root.sh: minimal Debian 12, build-essential, dkms, the kernel's
# headers; tests/guest/debian-overlay.sh): README's build lines (between
# its guest.debian_packages: build markers) run verbatim and one by one in
# that root.  Only the apt-get lines have the network; the others,
# dpkg-buildpackage among them, run in a network namespace of their own
# (unshare -n), so the build is shown to need nothing but the .dsc and
# what apt-get build-dep installed.
# It runs here, natively, and not in the QEMU guest that boots this root:
# under TCG the build takes about ten times as long, and the kernel it
# runs on plays no part in it.
# Usage: tests/guest/debian-build.sh ROOTFS SRC_DIR LINES OUT_DIR
#   ROOTFS: debian-root.sh's root directory (read only); SRC_DIR: the .dsc
#   and its tarballs; LINES: the README's build lines; OUT_DIR receives
#   the .debs, steps.txt (status, seconds, line) and build.log.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 ROOTFS SRC_DIR LINES OUT_DIR" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$2" && pwd)" lines="$(realpath "$3")"
mkdir -p "$4"; out="$(cd "$4" && pwd)"
ls "$src"/kjit_*.dsc > /dev/null || { echo "debian-build: no kjit_*.dsc in $src" >&2; exit 1; }
# shellcheck source=tests/guest/debian-overlay.sh
. "$here/debian-overlay.sh"
overlay_up "$1"
r="$overlay_root"
mkdir -p "$r/build"
cp "$src"/kjit_*.dsc "$src"/kjit_*.tar.* "$r/build/"
rm -f "$out"/*.deb "$out/steps.txt"
log="$out/build.log"; : > "$log"

# The root's package lists (debian-root.sh drops them from the image, as a
# machine that was never updated has none).
in_root apt-get update >> "$log" 2>&1 || { tail -20 "$log" >&2; echo "debian-build: apt-get update failed" >&2; exit 1; }
while IFS= read -r line; do
  [ -n "$line" ] || continue
  t0=$(date +%s)
  echo "\$ $line" >> "$log"
  rc=0
  in_root_line /build "$line" >> "$log" 2>&1 || rc=$?
  case "$line" in apt-get\ *) how="" ;; *) how="[offline] " ;; esac
  echo "$rc $(( $(date +%s) - t0 )) $how$line" | tee -a "$out/steps.txt"
  if [ "$rc" != 0 ]; then tail -30 "$log" >&2; echo "debian-build: '$line' failed ($rc); whole log: $log" >&2; exit 1; fi
done < "$lines"
ls "$r"/build/kjit-dkms_*.deb "$r"/build/kjit_*.deb > /dev/null 2>&1 ||
  { echo "debian-build: the lines built no kjit-dkms and kjit packages" >&2; exit 1; }
cp "$r"/build/*.deb "$out/"
