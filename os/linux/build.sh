#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds kjit.ko for the kernel ABI tools/lab/abi.sh names (KJIT_KERNEL, else
# tools/kernel-version).
# Usage: os/linux/build.sh BUILD_DIR
#   Needs BUILD_DIR/kernel-objs/kjit_engine_kernel.o (cmake target
#   kjit_engine_kernel; override with KJIT_ENGINE_OBJ=...).
#   Produces BUILD_DIR/module/kjit.ko (and BUILD_DIR/zydis-kernel/zydis_kernel.o).
# Env: KDIR (default /usr/src/linux-headers-$ABI), KJIT_BUILD (lab cache for
#   the Zydis source, default REPO/build/lab), JOBS (default 2).
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

[ -d "$KDIR" ] || { echo "build.sh: kernel headers $KDIR missing (apt-get install linux-headers-$ABI)" >&2; exit 1; }
[ -f "$ENGINE" ] || { echo "build.sh: $ENGINE missing: build the cmake target kjit_engine_kernel first" >&2; exit 1; }
# What the engine's code-generation flags (cmake/kernel-objects.cmake) and
# the entry path assume of the kernel, read from the flavour's own config:
# its thunks (every indirect branch and return of kjit's code goes through
# them), no IBT (kjit's code has no ENDBR), and ftrace with regs and direct
# calls.  Anything else is found at load time (kallsyms).
kcfg="$KDIR/.config"
[ -f "$kcfg" ] || { echo "build.sh: $kcfg missing" >&2; exit 1; }
for want in CONFIG_RETPOLINE=y CONFIG_RETHUNK=y CONFIG_DYNAMIC_FTRACE_WITH_REGS=y \
            CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y CONFIG_KPROBES=y CONFIG_KALLSYMS=y; do
  grep -qx "$want" "$kcfg" || { echo "build.sh: $ABI lacks $want, which kjit.ko needs" >&2; exit 1; }
done
if grep -qx 'CONFIG_X86_KERNEL_IBT=y' "$kcfg"; then
  echo "build.sh: $ABI enforces IBT (CONFIG_X86_KERNEL_IBT): kjit's code cache has no ENDBR" >&2; exit 1
fi
"$root/cmake/check-freestanding.sh" "$ENGINE" >/dev/null
"$here/check-exports.sh" >/dev/null

# 1. Zydis with the kernel's code-generation flags, from Debian's source.
zout="$B/zydis-kernel"
"$here/build-zydis.sh" "$zout" >/dev/null

# 2. Kbuild in a copy (Kbuild writes next to the sources).
mod="$B/module"
mkdir -p "$mod"
# Sources removed from this directory must not linger in the copy.
rm -f "$mod"/*.c "$mod"/*.h
cp "$here"/Kbuild "$here"/Makefile "$here"/*.c "$here"/*.h "$here"/*.S "$mod"/
mkdir -p "$mod/examples"
cp "$root"/plugins/*.c "$root"/plugins/*.h "$mod/examples/"
cp "$ENGINE" "$mod/kjit_engine.o_shipped"
cp "$zout/zydis_kernel.o" "$mod/zydis_kernel.o_shipped"
# modpost reads a .cmd file for every object of the module.
for o in kjit_engine zydis_kernel; do
  echo "cmd_$mod/$o.o := cp $mod/${o}.o_shipped $mod/$o.o" > "$mod/.$o.o.cmd"
done
make -C "$KDIR" M="$mod" KJIT_INCLUDE="$root/include" -j"$JOBS" modules
[ -f "$mod/kjit.ko" ] || { echo "build.sh: no kjit.ko" >&2; exit 1; }
# One-way layers: no call or include cycle between kjit's files.
"$here/check-layers.sh" "$mod"
echo "build.sh: built $mod/kjit.ko for $ABI"
