#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# README's install line (apt-get install ./kjit-dkms_*.deb ./kjit_*.deb)
# run verbatim in a throwaway copy of the debian_packages root
# (tests/guest/debian-overlay.sh), natively: what happens at install time
# happens in userspace, whatever kernel runs (DKMS builds for the kernels
# whose headers are there, not for the running one).  Two uses:
#   previous DEBS_DIR LINE OUT_IMG: install the release before this one
#     (tests/guest/debian-previous.sh) and pack the root, with it, into
#     OUT_IMG: the machine guest.debian_packages upgrades in its first
#     boot, with that release's kjit.ko loaded.
#   second-abi DEBS_DIR LINE ABI2 OUT_DIR: install this release, then a
#     second kernel ABI's headers (apt-get, as an upgrade of the flavour's
#     metapackage brings them): DKMS builds kjit.ko for that ABI too.
#     OUT_DIR/second-abi.log is the transcript.
# Prints CHECK lines; the status is 1 if one failed.  Runs as root.
# Usage: tests/guest/debian-installs.sh ROOTFS ABI previous|second-abi ...
set -euo pipefail
[ $# -ge 5 ] || { sed -n '2,/^set /p' "$0" | sed '$d' >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rootfs="$1" abi="$2" what="$3" debs="$(cd "$4" && pwd)" line="$5"
fails=0
check() {   # NAME STATUS [DETAIL]
  if [ "$2" = 0 ]; then echo "CHECK $1 PASS ${3:-}"; else echo "CHECK $1 FAIL ${3:-}"; fails=$((fails + 1)); fi
}
# shellcheck source=tests/guest/debian-overlay.sh
. "$here/debian-overlay.sh"
overlay_up "$rootfs"
r="$overlay_root"
mkdir -p "$r/debs"
cp "$debs"/kjit-dkms_*.deb "$debs"/kjit_*.deb "$r/debs/"

case "$what" in
previous)
  [ $# -eq 6 ] || { echo "usage: $0 ROOTFS ABI previous DEBS_DIR LINE OUT_IMG" >&2; exit 2; }
  img="$6"
  log="$img.log"
  s=0; in_root_line /debs "$line" > "$log" 2>&1 || s=$?
  check previous_install "$s" "$line"
  version="$(dpkg-deb -f "$(ls "$debs"/kjit-dkms_*.deb)" Version)"; version="${version%-*}"
  in_root dkms status > "$img.dkms-status" 2>&1 || true
  s=0; grep -q "^kjit/$version, $abi, x86_64: installed" "$img.dkms-status" || s=1
  check previous_dkms_built "$s" "$(tr '\n' ' ' < "$img.dkms-status")"
  rm -rf "$r/debs"
  overlay_detach
  kb="$(du -sk "$r" | cut -f1)"
  rm -f "$img.tmp"
  truncate -s "$(( kb / 1024 + 2048 ))M" "$img.tmp"
  mkfs.ext4 -q -F -L kjitroot -E root_owner=0:0 -d "$r" "$img.tmp"
  mv "$img.tmp" "$img"
  ;;
second-abi)
  [ $# -eq 7 ] || { echo "usage: $0 ROOTFS ABI second-abi DEBS_DIR LINE ABI2 OUT_DIR" >&2; exit 2; }
  abi2="$6"; mkdir -p "$7"; log="$(cd "$7" && pwd)/second-abi.log"
  : > "$log"
  s=0; in_root_line /debs "$line" >> "$log" 2>&1 || s=$?
  check install "$s" "$line"
  in_root apt-get update > /dev/null 2>&1 || true
  echo "\$ apt-get install -y linux-headers-$abi2" >> "$log"
  s=0; in_root apt-get install -y --no-install-recommends "linux-headers-$abi2" >> "$log" 2>&1 || s=$?
  check second_abi_headers "$s" "linux-headers-$abi2"
  in_root dkms status > "$log.dkms-status" 2>&1 || true
  cat "$log.dkms-status" >> "$log"
  s=0; grep -q "^kjit/.*, $abi2, x86_64: installed" "$log.dkms-status" || s=1
  check dkms_built_for_second_abi "$s" "$(grep "$abi2" "$log.dkms-status" | tr '\n' ' ')"
  s=0; grep -q "^kjit/.*, $abi, x86_64: installed" "$log.dkms-status" || s=1
  check dkms_first_abi_kept "$s"
  s=0; ls "$r/lib/modules/$abi2/updates/dkms/"kjit.ko* > /dev/null 2>&1 || s=1
  check second_abi_module "$s" "$(find "$r/lib/modules/$abi2/updates/dkms/" -name 'kjit.ko*' 2>/dev/null)"
  s=0; grep -Eq "auto installation service for kernel $abi2|Building.* $abi2" "$log" || s=1
  check second_abi_build_in_transcript "$s"
  ;;
*) echo "debian-installs: unknown use '$what'" >&2; exit 2 ;;
esac
[ "$fails" = 0 ]
