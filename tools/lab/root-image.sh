# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The Debian roots the lab boots from a disk image, built one way for the
# guest tests (tests/guest/debian-root.sh), the bench (bench/lib/make-root.sh)
# and syzkaller (tests/syzkaller/make-root.sh): debootstrap --variant=minbase
# from deb.debian.org, more packages, the caller's files, packed into an ext4
# image with mkfs.ext4 -d (no mount).  Sourced by a script that runs as root
# under `set -euo pipefail` and calls root_image as a plain command.
#
#   root_image CACHE_DIR SUITE [OPTION VALUE]...   -> prints CACHE_DIR/root.img
#     --include P,...   packages debootstrap installs with the base, from SUITE
#     --apt "P ..."     packages apt-get installs afterwards (no recommends)
#                       from the host's Debian sources: bookworm-security
#                       holds the pinned kernel's image and headers
#     --systemd HOST    a server's configuration: hostname HOST, the NVMe
#                       root in fstab, nothing running beside the test (the
#                       apt, e2scrub and fstrim timers, getty, timesyncd masked)
#     --configure FN    the caller's function, run with the root directory
#                       before packing
#     --depends FILE    a file the image holds (repeatable): rebuilt when it changes
#     --label L         the image's ext4 label (kjitroot)
#     --room MB         free room in the image beyond what the root holds (1024)
#
#   root_unit ROOTFS NAME <<EOF ... EOF
#       for a --configure function: installs the systemd unit NAME, its text
#       on stdin, enabled in multi-user.target
#
# CACHE_DIR/rootfs keeps the root: debootstrap runs again only when SUITE or
# --include change.  The image is rebuilt when the calling script, this file,
# an option or a --depends file changes.  Logs: CACHE_DIR/debootstrap.log,
# CACHE_DIR/apt.log.

root_image() {
  [ $# -ge 2 ] || { echo "usage: root_image CACHE_DIR SUITE [OPTION VALUE]..." >&2; return 2; }
  local cache="$1" suite="$2" include="" apt="" host="" configure="" label=kjitroot room=1024
  local depends=()
  shift 2
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "root_image: $1 needs a value" >&2; return 2; }
    case "$1" in
      --include) include="$2" ;;
      --apt) apt="$2" ;;
      --systemd) host="$2" ;;
      --configure) configure="$2" ;;
      --depends) depends+=("$2") ;;
      --label) label="$2" ;;
      --room) room="$2" ;;
      *) echo "root_image: unknown option $1" >&2; return 2 ;;
    esac
    shift 2
  done
  mkdir -p "$cache"; cache="$(cd "$cache" && pwd)"
  local rootfs="$cache/rootfs" img="$cache/root.img" stamp base kb
  stamp="$({ cat "$0" "${BASH_SOURCE[0]}" "${depends[@]}"
             printf '%s\n' "$suite" "$include" "$apt" "$host" "$configure" "$label" "$room"; } |
           sha256sum | cut -c1-16)"
  if [ "$(cat "$cache/stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$img" ]; then echo "$img"; return 0; fi

  # The base, written once: its stamp says it is whole.
  base="$(printf '%s\n' "$suite" "$include" | sha256sum | cut -c1-16)"
  if [ "$(cat "$cache/rootfs.stamp" 2>/dev/null)" != "$base" ]; then
    command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap >&2
    rm -f "$cache/rootfs.stamp"
    rm -rf --one-file-system "$rootfs"
    debootstrap --variant=minbase ${include:+"--include=$include"} "$suite" "$rootfs" http://deb.debian.org/debian \
      >"$cache/debootstrap.log" 2>&1 || { tail -20 "$cache/debootstrap.log" >&2; return 1; }
    rm -f "$rootfs"/var/cache/apt/archives/*.deb
    echo "$base" > "$cache/rootfs.stamp"
  fi

  if [ -n "$apt" ]; then
    local pkgs f
    read -r -a pkgs <<< "$apt"
    # The host's Debian sources, deb entries only, in either format (one-line
    # sources.list and *.list, deb822 *.sources).
    mkdir -p "$rootfs/etc/apt/sources.list.d"
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ ! -f "$f" ] || grep -hE '^[[:space:]]*deb[[:space:]]' "$f" || true
    done > "$rootfs/etc/apt/sources.list"
    for f in /etc/apt/sources.list.d/*.sources; do
      [ ! -f "$f" ] || awk 'BEGIN{RS=""; ORS="\n\n"} /Types: deb([^-]|$)/' "$f"
    done > "$rootfs/etc/apt/sources.list.d/debian.sources"
    if [ ! -s "$rootfs/etc/apt/sources.list" ] && [ ! -s "$rootfs/etc/apt/sources.list.d/debian.sources" ]; then
      echo "root_image: no deb entry in /etc/apt/sources.list, sources.list.d/*.list or *.sources" >&2; return 1
    fi
    mount -t proc proc "$rootfs/proc"
    # shellcheck disable=SC2064  # the path now: the trap runs after this function
    trap "umount $(printf '%q' "$rootfs/proc")" EXIT
    if ! { DEBIAN_FRONTEND=noninteractive chroot "$rootfs" apt-get update &&
           DEBIAN_FRONTEND=noninteractive chroot "$rootfs" apt-get install -y --no-install-recommends "${pkgs[@]}" &&
           DEBIAN_FRONTEND=noninteractive chroot "$rootfs" apt-get clean; } >"$cache/apt.log" 2>&1; then
      tail -30 "$cache/apt.log" >&2; return 1
    fi
    rm -rf "$rootfs"/var/lib/apt/lists/*
    umount "$rootfs/proc"; trap - EXIT
  fi

  if [ -n "$host" ]; then
    echo "$host" > "$rootfs/etc/hostname"
    echo '/dev/nvme0n1 / ext4 rw,errors=remount-ro 0 1' > "$rootfs/etc/fstab"
    local u
    for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
             fstrim.timer getty@tty1.service systemd-timesyncd.service; do
      ln -sfn /dev/null "$rootfs/etc/systemd/system/$u"
    done
  fi
  if [ -n "$configure" ]; then "$configure" "$rootfs"; fi

  rm -f "$img"
  kb="$(du -sk "$rootfs" | cut -f1)"
  truncate -s "$(( kb / 1024 + room ))M" "$img.tmp"
  mkfs.ext4 -q -F -L "$label" -E root_owner=0:0 -d "$rootfs" "$img.tmp"
  mv "$img.tmp" "$img"
  echo "$stamp" > "$cache/stamp"
  echo "$img"
}

root_unit() {
  cat > "$1/etc/systemd/system/$2"
  ln -sfn "/etc/systemd/system/$2" "$1/etc/systemd/system/multi-user.target.wants/$2"
}
