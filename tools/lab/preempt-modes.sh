#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The preemption modes a guest test boots the pinned kernel in, one per
# line: "voluntary" and "full" where the kernel chooses at boot
# (PREEMPT_DYNAMIC: the cloud and generic kernels), "rt" on PREEMPT_RT,
# whose kernel has that one model and ignores preempt=: one boot there,
# not the same configuration twice under two names.
# Usage: tools/lab/preempt-modes.sh    (env as the other lab scripts:
#   KJIT_BUILD, KJIT_KERNEL)
# With MODE as printed, `tools/lab/preempt-modes.sh --append MODE` prints
# the kernel parameter that selects it ("" for rt).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "${1:-}" = --append ]; then
  case "${2:-}" in
    voluntary|full|none) echo "preempt=$2" ;;
    rt) echo "" ;;
    *) echo "preempt-modes: unknown mode '${2:-}'" >&2; exit 2 ;;
  esac
  exit 0
fi
kcfg="$("$here/fetch-kernel.sh" "${KJIT_BUILD:-$PWD/build/lab}/kernel" | tail -n1)/config"
if grep -qx 'CONFIG_PREEMPT_DYNAMIC=y' "$kcfg"; then printf 'voluntary\nfull\n'
elif grep -qx 'CONFIG_PREEMPT_RT=y' "$kcfg"; then echo rt
else echo "preempt-modes: $kcfg: neither PREEMPT_DYNAMIC nor PREEMPT_RT" >&2; exit 2; fi
