#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs a Kbuild step (make -C KDIR M=..., os/linux/conftest.sh) for the lab's
# kernel (tools/lab/abi.sh): on this host, or, for Debian 13's kernels
# (+deb13 ABIs), in the lab's trixie chroot, whose gcc-14 and glibc their
# headers need (trixie-chroot.sh), with the repository and each DIR at their
# own paths.  KDIR is the same path in both.
# Usage: tools/lab/kbuild.sh [DIR...] -- CMD...
#        tools/lab/kbuild.sh --root     the chroot's path ("" on this host),
#                                       to check a KDIR from outside
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
in_chroot=0
case "$ABI" in *+deb13-*) in_chroot=1 ;; esac
if [ "${1:-}" = --root ]; then
  if [ "$in_chroot" = 1 ]; then "$here/trixie-chroot.sh" setup "$ABI"; else echo ""; fi
  exit 0
fi
dirs=("$repo")
while [ $# -gt 0 ] && [ "$1" != -- ]; do dirs+=("$(cd "$1" && pwd)"); shift; done
[ "${1:-}" = -- ] || { echo "usage: $0 [DIR...] -- CMD..." >&2; exit 2; }
shift
if [ "$in_chroot" = 0 ]; then exec "$@"; fi
"$here/trixie-chroot.sh" setup "$ABI" >/dev/null
exec "$here/trixie-chroot.sh" run "${dirs[@]}" -- "$@"
