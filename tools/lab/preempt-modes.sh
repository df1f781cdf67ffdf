#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The preemption modes a guest test boots the pinned kernel in, one per
# line: "voluntary" and "full" where the kernel chooses at boot
# (PREEMPT_DYNAMIC: the cloud and generic kernels), "rt" on PREEMPT_RT,
# whose kernel has that one model and ignores preempt=: one boot there,
# not the same configuration twice under two names.  A PREEMPT_RT kernel
# can also choose at boot (PREEMPT_DYNAMIC), then between full and lazy
# only: "rt" is its full preemption.  "lazy" follows where the kernel
# chooses at boot and lazy preemption is one of its models (PREEMPT_LAZY
# or ARCH_HAS_PREEMPT_LAZY).  What the config holds decides, never the
# version: Debian's 6.12 rt has PREEMPT_RT, PREEMPT_DYNAMIC and
# PREEMPT_LAZY (its default model), its cloud kernel none of the lazy ones.
# Usage: tools/lab/preempt-modes.sh    (env as the other lab scripts:
#   KJIT_BUILD, KJIT_KERNEL)
# With MODE as printed, `tools/lab/preempt-modes.sh --append MODE` prints
# the kernel parameter that selects it ("" for rt on a kernel that cannot
# choose).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kcfg() { echo "$("$here/fetch-kernel.sh" "${KJIT_BUILD:-$PWD/build/lab}/kernel" | tail -n1)/config"; }
if [ "${1:-}" = --append ]; then
  case "${2:-}" in
    voluntary|full|none|lazy) echo "preempt=$2" ;;
    # A PREEMPT_RT kernel that chooses at boot may default to lazy (its
    # configured model): rt asks for full preemption by name.
    rt) if grep -qx 'CONFIG_PREEMPT_DYNAMIC=y' "$(kcfg)"; then echo preempt=full; else echo ""; fi ;;
    *) echo "preempt-modes: unknown mode '${2:-}'" >&2; exit 2 ;;
  esac
  exit 0
fi
kcfg="$(kcfg)"
has() { grep -qx "CONFIG_$1=y" "$kcfg"; }
# PREEMPT_RT first: Debian's 6.12 rt has PREEMPT_DYNAMIC too, and does not
# take preempt=voluntary.
if has PREEMPT_RT; then echo rt
elif has PREEMPT_DYNAMIC; then printf 'voluntary\nfull\n'
else echo "preempt-modes: $kcfg: neither PREEMPT_DYNAMIC nor PREEMPT_RT" >&2; exit 2; fi
if has PREEMPT_DYNAMIC && { has PREEMPT_LAZY || has ARCH_HAS_PREEMPT_LAZY; }; then echo lazy; fi
