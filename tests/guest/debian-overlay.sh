# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# A throwaway copy of the debian_packages root (tests/guest/debian-root.sh)
# to run commands in as on that machine, natively: an overlay whose lower
# layer, the cached root, is never written.  Sourced.
#   overlay_up ROOTFS: mounts it (with /proc, /dev, /dev/pts and the host's DNS) at
#     $overlay_root; overlay_down (also on exit) unmounts and drops it.
#   in_root CMD...: runs CMD in it with a clean environment, as root.
#   in_root_line DIR LINE: sh -c LINE in DIR of it, offline (unshare -n)
#     unless LINE is an apt-get command; its output goes to stdout.
#   overlay_detach: unmounts /proc and /dev only (before the tree is
#     copied elsewhere, e.g. by mkfs.ext4 -d).

overlay_mounts=()
overlay_tmp=""
overlay_root=""

overlay_down() {
  local i
  for (( i = ${#overlay_mounts[@]} - 1; i >= 0; i-- )); do
    umount "${overlay_mounts[$i]}" 2>/dev/null || umount -l "${overlay_mounts[$i]}" 2>/dev/null || true
  done
  overlay_mounts=()
  [ -z "$overlay_tmp" ] || rm -rf "$overlay_tmp"
  overlay_tmp=""
}

overlay_up() {
  local lower
  lower="$(cd "$1" && pwd)"
  [ -x "$lower/usr/bin/apt-get" ] || { echo "debian-overlay: $lower is no Debian root" >&2; return 1; }
  overlay_tmp="$(mktemp -d)"
  overlay_root="$overlay_tmp/root"
  mkdir -p "$overlay_tmp/upper" "$overlay_tmp/work" "$overlay_root"
  trap overlay_down EXIT
  mount -t overlay overlay -o "lowerdir=$lower,upperdir=$overlay_tmp/upper,workdir=$overlay_tmp/work" "$overlay_root"
  overlay_mounts+=("$overlay_root")
  mount -t proc proc "$overlay_root/proc"; overlay_mounts+=("$overlay_root/proc")
  mount --bind /dev "$overlay_root/dev"; overlay_mounts+=("$overlay_root/dev")
  mount --bind /dev/pts "$overlay_root/dev/pts"; overlay_mounts+=("$overlay_root/dev/pts")
  cp /etc/resolv.conf "$overlay_root/etc/resolv.conf"
}

overlay_detach() {
  umount "$overlay_root/dev/pts" "$overlay_root/dev" "$overlay_root/proc"
  overlay_mounts=("$overlay_root")
}

in_root() {
  chroot "$overlay_root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}

in_root_line() {
  local dir="$1" line="$2" net=(unshare -n)
  case "$line" in apt-get\ *) net=() ;; esac
  ${net[@]+"${net[@]}"} chroot "$overlay_root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive sh -c "cd $dir && $line"
}
