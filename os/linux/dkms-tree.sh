#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The source tree DKMS builds kjit.ko from on the target (/usr/src/kjit-VERSION
# in the kjit-dkms package): the module's C and assembly sources (capture/
# too), Kbuild, the Makefile, the example tools (examples/), the C-ABI and
# uapi headers (include/), and the two kernel-independent prebuilt objects:
# the engine (cmake target kjit_engine_kernel) and Zydis
# (os/linux/build-zydis.sh).
# Building it needs only the kernel's headers and the toolchain: no network,
# no cmake, nothing from the lab.
# Usage: os/linux/dkms-tree.sh DEST ENGINE_O ZYDIS_O
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 DEST ENGINE_O ZYDIS_O" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="$1"
"$root/cmake/check-freestanding.sh" "$2" >/dev/null
mkdir -p "$dest/examples" "$dest/include"
cp "$here"/Kbuild "$here"/Makefile "$here"/conftest.sh "$here"/*.c "$here"/*.h "$here"/*.S "$dest"/
mkdir -p "$dest/capture"
cp "$here"/capture/*.c "$here"/capture/*.h "$dest/capture/"
mkdir -p "$dest/conftest"
cp "$here"/conftest/* "$dest/conftest/"
cp "$root"/plugins/*.c "$root"/plugins/*.h "$dest/examples/"
cp -r "$root"/include/. "$dest/include/"
cp "$2" "$dest/kjit_engine.o_shipped"
cp "$3" "$dest/zydis_kernel.o_shipped"
