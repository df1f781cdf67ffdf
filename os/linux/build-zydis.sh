#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Zydis (decoder + encoder, no formatter) compiled with the kernel's
# code-generation flags (kernel-codegen.flags) and prelinked into one
# kernel-independent object, from Debian's zydis source (never vendored):
# kjit.ko links it as zydis_kernel.o, built by os/linux/build.sh or shipped
# prebuilt in the kjit-dkms package (debian/rules).
# Usage: os/linux/build-zydis.sh OUT_DIR [ZYDIS_SRC]   -> OUT_DIR/zydis_kernel.o
#   ZYDIS_SRC defaults to the one tools/lab/fetch-zydis-source.sh fetches
#   (KJIT_BUILD/zydis-src).  Env: JOBS (default 2).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 OUT_DIR [ZYDIS_SRC]" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
JOBS="${JOBS:-2}"
zsrc="${2:-$("$root/tools/lab/fetch-zydis-source.sh" | tail -n1)}"
mkdir -p "$1"
zout="$(cd "$1" && pwd)"
mkdir -p "$zout/inc"
ln -sfn /usr/include/Zycore "$zout/inc/Zycore"
[ -f /usr/include/Zycore/Types.h ] || { echo "build-zydis.sh: Zycore headers missing (apt-get install libzycore-dev)" >&2; exit 1; }
# The kernel's code-generation flags, shared with the engine's kernel
# object (cmake/kernel-objects.cmake).
codegen="$here/kernel-codegen.flags"
mapfile -t KFLAGS < <(grep -v -e '^#' -e '^$' "$codegen")
[ "${#KFLAGS[@]}" -gt 0 ] || { echo "build-zydis.sh: no flags in $codegen" >&2; exit 1; }
ZFLAGS=(-std=gnu11 -nostdinc -isystem "$(gcc -print-file-name=include)"
        -I"$zsrc/include" -I"$zsrc/src" -I"$zout/inc"
        "${KFLAGS[@]}" -fno-common
        -O2 -DZYAN_NO_LIBC -DZYDIS_DISABLE_FORMATTER -DZYDIS_STATIC_BUILD -DZYCORE_STATIC_BUILD)
zobjs=()
pids=()
for f in Decoder DecoderData Encoder EncoderData SharedData Utils Zydis MetaInfo Mnemonic Register Segment; do
  o="$zout/$f.o"; zobjs+=("$o")
  if [ ! -f "$o" ] || [ "$zsrc/src/$f.c" -nt "$o" ] || [ "$0" -nt "$o" ] || [ "$codegen" -nt "$o" ]; then
    gcc "${ZFLAGS[@]}" -c "$zsrc/src/$f.c" -o "$o" &
    pids+=($!)
    if [ "${#pids[@]}" -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
  fi
done
for p in "${pids[@]}"; do wait "$p"; done
ld -r -o "$zout/zydis_kernel.o" "${zobjs[@]}"
zbad="$(nm -u "$zout/zydis_kernel.o" | awk '{print $2}' | grep -v -E '^(__x86_return_thunk|__x86_indirect_thunk_.*|memcpy|memset|memmove|memcmp)$' || true)"
[ -z "$zbad" ] || { echo "build-zydis.sh: Zydis needs symbols the kernel lacks: $zbad" >&2; exit 1; }
echo "$zout/zydis_kernel.o"
