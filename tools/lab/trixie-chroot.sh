#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A Debian 13 (trixie) chroot for building modules against trixie's kernels
# (ABIs ending in +deb13-FLAVOUR).  Their headers package depends on gcc-14
# and their Kbuild tools on trixie's glibc, neither of which the Debian 12
# host has, so Kbuild for them runs in here.
# Usage:
#   tools/lab/trixie-chroot.sh setup [ABI]
#       makes the chroot when it is missing and installs linux-headers-ABI
#       (with gcc-14, make, libelf-dev, xz-utils, kmod) when they are
#       missing; needs no network once they are there.  Prints the root.
#   tools/lab/trixie-chroot.sh refresh [ABI]
#       as setup, then updates the chroot's index and upgrades everything in it.
#   tools/lab/trixie-chroot.sh run DIR [DIR...] -- CMD [ARG...]
#       runs CMD as root in the chroot, each DIR bind-mounted read-write at
#       its own path (so paths given to CMD mean the same inside and out)
#       and /proc mounted, in the caller's working directory when that is
#       inside a DIR (else in /); prints nothing of its own and exits with
#       CMD's status.  A DIR inside another DIR is seen through that one.
#       CMD gets a clean environment (PATH, HOME, LANG=C.UTF-8): pass
#       variables with `env VAR=VALUE CMD`.
# ABI defaults to abi.sh's (KJIT_KERNEL, else tools/kernel-version) and must
# be a trixie one; tools/lab/fetch-trixie-deb.sh --newest-abi names the
# current one.
# Env: KJIT_TRIXIE_ROOT (default $KJIT_BUILD/trixie-root), KJIT_BUILD
#   (default REPO/build/lab), KJIT_TRIXIE_MIRROR (default
#   http://deb.debian.org/debian), KJIT_TRIXIE_SECURITY (default
#   http://deb.debian.org/debian-security).
set -euo pipefail
self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
here="$(dirname "$self")"
root="$(cd "$here/../.." && pwd)"
BUILD="${KJIT_BUILD:-$root/build/lab}"
ROOT="${KJIT_TRIXIE_ROOT:-$BUILD/trixie-root}"
MIRROR="${KJIT_TRIXIE_MIRROR:-http://deb.debian.org/debian}"
SECURITY="${KJIT_TRIXIE_SECURITY:-http://deb.debian.org/debian-security}"
# Debian 12's debian-archive-keyring (2023.3+deb12u2) already holds trixie's
# archive and release keys: debootstrap verifies trixie with it.
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
PACKAGES=(gcc-14 make libelf-dev xz-utils kmod)

usage() {
  echo "usage: $0 setup|refresh [ABI] | $0 run DIR [DIR...] -- CMD [ARG...]" >&2
  exit 2
}
die() { echo "trixie-chroot: $*" >&2; exit 1; }

[ $# -ge 1 ] || usage
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mount)"

# Everything below runs in a private mount namespace: the chroot's mounts
# (its /proc, the bind-mounted DIRs, debootstrap's own) are never visible on
# the host and vanish with the last process, even one killed with SIGKILL.
# So no mount can outlive a run, and deleting the chroot can never reach
# through a leftover bind mount into the directories it was given.
if [ "$1" != __ns ]; then
  case "$1" in setup | refresh | run) ;; *) usage ;; esac
  mkdir -p "$(dirname "$ROOT")"
  # Physical: run() compares mount points with their realpath.
  ROOT="$(cd "$(dirname "$ROOT")" && pwd -P)/$(basename "$ROOT")"
  export KJIT_TRIXIE_ROOT="$ROOT"
  exec unshare --mount --propagation private -- "$self" __ns "$@"
fi
shift

# setup and refresh change the chroot; runs only read its system part.
# Any number of runs at once, but none while it changes.
lock() { exec 9>"$ROOT.lock"; flock "$1" 9; }

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" || umount -l "${mounted[i]}" || true
  done
  mounted=()
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# /proc for Kbuild and maintainer scripts; a devpts of the chroot's own
# for apt's terminal log.
mount_kernel_fs() {
  mount -t proc proc "$ROOT/proc"
  mounted+=("$ROOT/proc")
  mount -t devpts -o newinstance,ptmxmode=0666 devpts "$ROOT/dev/pts"
  mounted+=("$ROOT/dev/pts")
}

# A clean environment: the host's (CC, LANG with locales trixie lacks, ...)
# would change what Kbuild and apt do inside.
# CWD: the directory to start in (chroot itself starts in /).
CWD=/
in_root() {
  chroot "$ROOT" /usr/bin/env -i -C "$CWD" HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# INITRD=No: the headers depend on the image, whose hook would otherwise
# build an initramfs nobody boots.
apt_in_root() {
  in_root DEBIAN_FRONTEND=noninteractive INITRD=No apt-get "$@" </dev/null
}

bootstrap() {
  command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap; tools/lab/deps.sh has it)"
  gpg --no-default-keyring --keyring "$KEYRING" --list-keys 2>/dev/null | grep -q 'trixie' \
    || die "$KEYRING has no trixie key: upgrade debian-archive-keyring (bookworm's 2023.3+deb12u2 has them)"
  # Built aside and renamed when complete: a root that exists is whole.
  local new="$ROOT.new"
  rm -rf --one-file-system "$new"
  debootstrap --variant=minbase --keyring="$KEYRING" trixie "$new" "$MIRROR" >&2
  mv "$new" "$ROOT"
}

configure() {
  # Security updates carry the newest kernels; the archive's keys come with
  # trixie's own debian-archive-keyring, which apt in minbase depends on.
  cat > "$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR trixie main
deb $MIRROR trixie-updates main
deb $SECURITY trixie-security main
EOF
  cat > "$ROOT/etc/apt/apt.conf.d/90kjit" <<'EOF'
APT::Install-Recommends "false";
Acquire::Languages "none";
EOF
  # Only Kbuild runs in here: the image (a dependency of the headers) needs
  # no modules, and no one reads the documentation.  Saves most of the disk.
  cat > "$ROOT/etc/dpkg/dpkg.cfg.d/90kjit" <<'EOF'
path-exclude=/usr/lib/modules/*/kernel/*
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
EOF
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
}

setup() {
  local refresh="$1" abi="$2"
  case "$abi" in
    *+deb13-*) ;;
    *) die "$abi is not a Debian 13 ABI (*+deb13-*); tools/lab/fetch-trixie-deb.sh --newest-abi names one" ;;
  esac
  lock -x
  [ -d "$ROOT" ] || bootstrap
  configure
  mount_kernel_fs
  local have=1 p
  for p in "${PACKAGES[@]}" "linux-headers-$abi"; do
    dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Status}' "$p" 2>/dev/null \
      | grep -q '^install ok installed$' || have=0
  done
  if [ "$refresh" = 1 ] || [ "$have" = 0 ]; then
    apt_in_root update >&2
    apt_in_root install -y "${PACKAGES[@]}" "linux-headers-$abi" >&2
    [ "$refresh" = 0 ] || apt_in_root -y dist-upgrade >&2
    # The downloaded .debs are not needed again.
    apt_in_root clean
  fi
  [ -f "$ROOT/usr/src/linux-headers-$abi/.config" ] || die "linux-headers-$abi: no .config in the chroot"
  echo "$ROOT"
}

run() {
  local dirs=() d target
  while [ $# -gt 0 ] && [ "$1" != -- ]; do dirs+=("$1"); shift; done
  if [ $# -lt 2 ] || [ ${#dirs[@]} = 0 ]; then usage; fi
  shift
  [ -x "$ROOT/usr/bin/env" ] || die "no chroot at $ROOT: run '$0 setup ABI' first"
  lock -s
  local abs=() bound=() b inside
  for d in "${dirs[@]}"; do
    [ -d "$d" ] || die "$d: not a directory"
    d="$(cd "$d" && pwd)"
    [ "$d" != / ] || die "will not bind / over the chroot"
    abs+=("$d")
  done
  # Sorted, a directory comes before the ones inside it; those are already
  # visible at their own paths through it (and binding them again would
  # write mount points into the host's directory).
  mapfile -t abs < <(printf '%s\n' "${abs[@]}" | LC_ALL=C sort -u)
  for d in "${abs[@]}"; do
    inside=0
    for b in "${bound[@]}"; do case "$d/" in "$b"/*) inside=1 ;; esac; done
    [ "$inside" = 0 ] || continue
    bound+=("$d")
    target="$ROOT$d"
    # The mount point must be a plain directory of the chroot's own: a
    # symlink on the way could lead out of the chroot, and a directory with
    # files (/usr, the headers) would be hidden by the mount.  Empty
    # directories there are the mount points of earlier runs' DIRs.
    [ "$(realpath -m "$target")" = "$target" ] || die "$d: a symlink inside the chroot is on its path"
    mkdir -p "$target"
    [ -z "$(find "$target" -mindepth 1 ! -type d -print -quit)" ] \
      || die "$d: the chroot has files there, which the mount would hide"
    mount --bind "$d" "$target"
    mounted+=("$target")
  done
  mount_kernel_fs
  # The caller's working directory, when it is visible inside, is CMD's.
  local here_now
  here_now="$(pwd)"
  for b in "${bound[@]}"; do
    case "$here_now/" in "$b"/*) CWD="$here_now" ;; esac
  done
  local rc=0
  in_root "$@" || rc=$?
  exit "$rc"
}

cmd="$1"; shift
case "$cmd" in
  setup | refresh)
    [ $# -le 1 ] || usage
    if [ $# = 1 ]; then abi="$1"; else
      # shellcheck source=tools/lab/abi.sh
      . "$here/abi.sh"
      abi="$ABI"
    fi
    setup "$([ "$cmd" = refresh ] && echo 1 || echo 0)" "$abi"
    ;;
  run) run "$@" ;;
  *) usage ;;
esac
