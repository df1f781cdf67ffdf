# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The kernel ABI the lab builds and tests for, sourced by every lab script:
# KJIT_KERNEL when set (KJIT_KERNEL=6.1.0-57-rt-amd64 ./kjit-lab test), else
# the default flavour in tools/kernel-version.  Sets ABI, e.g.
# 6.1.0-57-cloud-amd64 (Debian's linux-image-ABI and linux-headers-ABI).
kjit_default_abi="$(tr -d '[:space:]' < "$(dirname "${BASH_SOURCE[0]}")/../kernel-version")"
ABI="${KJIT_KERNEL:-$kjit_default_abi}"
case "$ABI" in
  *[!A-Za-z0-9.+-]* | "") echo "KJIT_KERNEL: not a kernel ABI: '$ABI'" >&2; exit 2 ;;
esac
# A "+kcov" ABI (6.1.0-57-cloud-amd64+kcov) is no Debian package: it is the
# Debian kernel of the ABI before "+kcov" rebuilt with KCOV by
# kcov-kernel.sh into the lab cache kjit-lab gives that ABI (build-ABI/lab,
# or KJIT_BUILD), and its build tree serves as its headers: KDIR's default
# for os/linux/build.sh and the other scripts that build a module.
case "$ABI" in
  *+kcov)
    # shellcheck disable=SC2034  # read by the scripts that source this one
    KDIR="${KDIR:-${KJIT_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build-$ABI/lab}/kcov-kernel/build}" ;;
esac
