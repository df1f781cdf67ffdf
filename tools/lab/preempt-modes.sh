#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The preemption modes a guest test boots the pinned kernel in, on one
# line: "voluntary full" where the kernel chooses at boot (PREEMPT_DYNAMIC:
# the cloud and generic kernels), "rt" on PREEMPT_RT, whose kernel has that
# one model and ignores preempt=: one boot there, not the same
# configuration twice under two names.  A PREEMPT_RT kernel can also choose
# at boot (PREEMPT_DYNAMIC), then between full and lazy only: "rt" is its
# full preemption.  "lazy" follows where the kernel chooses at boot and lazy
# preemption is one of its models (PREEMPT_LAZY or ARCH_HAS_PREEMPT_LAZY).
# What the config holds decides, never the version: Debian's 6.12 rt has
# PREEMPT_RT, PREEMPT_DYNAMIC and PREEMPT_LAZY (its default model), its
# cloud kernel none of the lazy ones.
# Usage: tools/lab/preempt-modes.sh           every mode
#        tools/lab/preempt-modes.sh --first   the first, for a test that boots once
#        tools/lab/preempt-modes.sh --append MODE
#   the kernel parameter that boots MODE (a mode printed above, or none):
#   "" where the kernel boots in MODE by itself (the model it is configured
#   with, as the stock kernel boots, or rt on a kernel that cannot choose),
#   else preempt=MODE (preempt=full for rt: a PREEMPT_RT kernel that chooses
#   at boot may default to lazy).
# Env as the other lab scripts: KJIT_BUILD, KJIT_KERNEL.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "${1:-}" in
  "" | --first | --append) ;;
  *) echo "usage: $0 [--first | --append MODE]" >&2; exit 2 ;;
esac
kcfg="$("$here/fetch-kernel.sh" "${KJIT_BUILD:-$PWD/build/lab}/kernel" | tail -n1)/config"
has() { grep -qx "CONFIG_$1=y" "$kcfg"; }

modes() {
  # PREEMPT_RT first: Debian's 6.12 rt has PREEMPT_DYNAMIC too, and does not
  # take preempt=voluntary.
  if has PREEMPT_RT; then echo rt
  elif has PREEMPT_DYNAMIC; then printf 'voluntary\nfull\n'
  else echo "preempt-modes: $kcfg: neither PREEMPT_DYNAMIC nor PREEMPT_RT" >&2; return 2; fi
  if has PREEMPT_DYNAMIC && { has PREEMPT_LAZY || has ARCH_HAS_PREEMPT_LAZY; }; then echo lazy; fi
}

append() {
  local model symbol
  case "$1" in
    none) model=none symbol=PREEMPT_NONE ;;
    voluntary) model=voluntary symbol=PREEMPT_VOLUNTARY ;;
    full | rt) model=full symbol=PREEMPT ;;
    lazy) model=lazy symbol=PREEMPT_LAZY ;;
    *) echo "preempt-modes: unknown mode '$1'" >&2; return 2 ;;
  esac
  if ! has PREEMPT_DYNAMIC || has "$symbol"; then echo ""; else echo "preempt=$model"; fi
}

if [ "${1:-}" = --append ]; then append "${2:-}"; exit; fi
all="$(modes)"
if [ "${1:-}" = --first ]; then echo "${all%%$'\n'*}"; else echo "${all//$'\n'/ }"; fi
