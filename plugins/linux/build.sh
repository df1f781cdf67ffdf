#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds the plugin modules for the pinned ABI: BUILD_DIR/plugins-linux/*.ko.
# Usage: plugins/linux/build.sh BUILD_DIR   (needs BUILD_DIR/module/Module.symvers
# from os/linux/build.sh).  Env: KDIR, JOBS.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
B="$(cd "$1" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
KDIR="${KDIR:-/usr/src/linux-headers-$ABI}"
sym="$B/module/Module.symvers"
[ -f "$sym" ] || { echo "plugins/linux/build.sh: $sym missing (os/linux/build.sh $B)" >&2; exit 1; }
out="${KJIT_PLUGINS_OUT:-$B/plugins-linux}"   # another for a run beside this one
mkdir -p "$out/examples"
cp "$here"/Kbuild "$here"/*.c "$out"/
cp "$root"/plugins/*.c "$root"/plugins/kjit_examples.h "$out/examples/"
"$root/tools/lab/kbuild.sh" "$B" "$out" -- \
  make -C "$KDIR" M="$out" KJIT_INCLUDE="$root/include" KBUILD_EXTRA_SYMBOLS="$sym" -j"${JOBS:-2}" modules
ls "$out"/*.ko
