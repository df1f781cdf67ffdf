#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds kjit.ko for the kernel ABI tools/lab/abi.sh names (KJIT_KERNEL, else
# tools/kernel-version).
# Usage: os/linux/build.sh BUILD_DIR
#   Needs BUILD_DIR/kernel-objs/kjit_engine_kernel.o (cmake target
#   kjit_engine_kernel; override with KJIT_ENGINE_OBJ=...).
#   Produces BUILD_DIR/module/kjit.ko (and BUILD_DIR/zydis-kernel/zydis_kernel.o).
# Env: KDIR (default /usr/src/linux-headers-$ABI; for a Debian 13 ABI, the
#   path inside the trixie chroot), KJIT_BUILD (lab cache for the Zydis
#   source and the trixie chroot, default REPO/build/lab), JOBS (default 2).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mkdir -p "$1"
B="$(cd "$1" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
KDIR="${KDIR:-/usr/src/linux-headers-$ABI}"
JOBS="${JOBS:-2}"
ENGINE="${KJIT_ENGINE_OBJ:-$B/kernel-objs/kjit_engine_kernel.o}"
export KJIT_BUILD="${KJIT_BUILD:-$root/build/lab}"

# Debian 13's kernels need their own toolchain for Kbuild: the Kbuild steps
# (conftest's probes and the module) run through tools/lab/kbuild.sh, in
# the lab's trixie chroot there.  The engine and Zydis objects are still
# compiled here: they are plain relocatable objects, which a gcc-14 Kbuild
# links as it links its own.
kroot="$("$root/tools/lab/kbuild.sh" --root)"
kbuild=("$root/tools/lab/kbuild.sh" "$B" --)
[ -d "$kroot$KDIR" ] || { echo "build.sh: kernel headers $kroot$KDIR missing (apt-get install linux-headers-$ABI)" >&2; exit 1; }
[ -f "$ENGINE" ] || { echo "build.sh: $ENGINE missing: build the cmake target kjit_engine_kernel first" >&2; exit 1; }
[ -f "$kroot$KDIR/.config" ] || { echo "build.sh: $kroot$KDIR/.config missing" >&2; exit 1; }
"$root/cmake/check-freestanding.sh" "$ENGINE" >/dev/null
"$here/check-exports.sh" >/dev/null

# 1. Zydis with the kernel's code-generation flags, from Debian's source.
zout="$B/zydis-kernel"
"$here/build-zydis.sh" "$zout" >/dev/null

# 2. Kbuild in a copy (Kbuild writes next to the sources).
mod="$B/module"
mkdir -p "$mod"
# Sources removed from this directory must not linger in the copy.
rm -f "$mod"/*.c "$mod"/*.h "$mod"/capture/*.c "$mod"/capture/*.h
cp "$here"/Kbuild "$here"/Makefile "$here"/*.c "$here"/*.h "$here"/*.S "$mod"/
mkdir -p "$mod/capture"
cp "$here"/capture/*.c "$here"/capture/*.h "$mod/capture/"
# What the kernel requires and which API shapes its headers have.
"${kbuild[@]}" "$here/conftest.sh" "$KDIR" "$mod/kjit_compat_generated.h"
mkdir -p "$mod/examples"
cp "$root"/plugins/*.c "$root"/plugins/*.h "$mod/examples/"
cp "$ENGINE" "$mod/kjit_engine.o_shipped"
cp "$zout/zydis_kernel.o" "$mod/zydis_kernel.o_shipped"
# modpost reads a .cmd file for every object of the module.
for o in kjit_engine zydis_kernel; do
  echo "cmd_$mod/$o.o := cp $mod/${o}.o_shipped $mod/$o.o" > "$mod/.$o.o.cmd"
done
"${kbuild[@]}" make -C "$KDIR" M="$mod" KJIT_INCLUDE="$root/include" -j"$JOBS" modules
[ -f "$mod/kjit.ko" ] || { echo "build.sh: no kjit.ko" >&2; exit 1; }
# One-way layers: no call or include cycle between kjit's files.
"$here/check-layers.sh" "$mod"
echo "build.sh: built $mod/kjit.ko for $ABI"
