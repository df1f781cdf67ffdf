#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kjit that guest.debian_packages upgrades from: this tree's .dsc built
# as version 0.1.99-1 whose kjit.ko and kjitctl speak the ABI before this
# one's (KJIT_ABI_VERSION - 1).  So the upgrade meets what a real one meets
# with kjit.ko loaded: DKMS replaces the module on disk while the old one
# runs, and the new kjitctl refuses the old module's ABI (the version
# handshake's message).  Built offline (unshare -n), as tools/package.sh
# builds the real one; kept while the .dsc is the same.
# Usage: tests/guest/debian-previous.sh PACKAGES_DIR OUT_DIR
#   PACKAGES_DIR: tools/package.sh's output (kjit_*.dsc and its tarballs).
#   -> OUT_DIR/kjit-dkms_0.1.99-1_amd64.deb, OUT_DIR/kjit_0.1.99-1_amd64.deb
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 PACKAGES_DIR OUT_DIR" >&2; exit 2; }
pk="$(cd "$1" && pwd)"
mkdir -p "$2"; out="$(cd "$2" && pwd)"
version=0.1.99-1
dsc="$(ls "$pk"/kjit_*.dsc)"
stamp="$(sha256sum "$dsc" "$0" | sha256sum | cut -c1-16)"
if [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ] &&
   ls "$out/kjit-dkms_${version}_amd64.deb" "$out/kjit_${version}_amd64.deb" > /dev/null 2>&1; then
  exit 0
fi
rm -rf "${out:?}"/*
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
log="$out/build.log"
dpkg-source -x "$dsc" "$t/src" > "$log" 2>&1
ioctl_h="$t/src/include/uapi/kjit/ioctl.h"
abi="$(sed -n 's/^#define KJIT_ABI_VERSION \([0-9]*\)u.*/\1/p' "$ioctl_h")"
if [ -z "$abi" ] || [ "$abi" -le 1 ]; then echo "debian-previous: no KJIT_ABI_VERSION in $ioctl_h" >&2; exit 1; fi
sed -i -e "s/^#define KJIT_ABI_VERSION ${abi}u/#define KJIT_ABI_VERSION $((abi - 1))u/" \
       -e 's/^#define KJIT_VERSION "[^"]*"/#define KJIT_VERSION "0.1.99"/' "$ioctl_h"
if ! grep -q "KJIT_ABI_VERSION $((abi - 1))u" "$ioctl_h" || ! grep -q 'KJIT_VERSION "0.1.99"' "$ioctl_h"; then
  echo "debian-previous: could not set the previous ABI and version in $ioctl_h" >&2; exit 1
fi
# Its changelog entry, as the release before this one.
{
  echo "kjit ($version) unstable; urgency=medium"
  echo
  echo "  * The release guest.debian_packages upgrades from (ABI $((abi - 1)))."
  echo
  sed -n 's/^ -- \(.*\)$/ -- \1/p' "$t/src/debian/changelog" | head -n 1
  echo
} > "$t/changelog.prev"
cp "$t/changelog.prev" "$t/src/debian/changelog"
offline=(); unshare -n true 2>/dev/null && offline=(unshare -n)
(cd "$t/src" && DEB_BUILD_OPTIONS="parallel=${JOBS:-2} nocheck noautodbgsym" \
   ${offline[@]+"${offline[@]}"} dpkg-buildpackage -b --no-sign) >> "$log" 2>&1 ||
  { tail -30 "$log" >&2; echo "debian-previous: dpkg-buildpackage failed (whole log: $log)" >&2; exit 1; }
cp "$t/kjit-dkms_${version}_amd64.deb" "$t/kjit_${version}_amd64.deb" "$out/"
echo "$stamp" > "$out/stamp"
