#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Whether the lab's kernel has the RCU bug that upstream 61399e0c5410 fixed
# (os/linux/README.md, "Kernel flavours"): rcu_read_unlock_special
# re-initialising its deferred-QS irq_work, i.e. storing the work's handler
# (rcu_preempt_deferred_qs_handler) itself.  Read from the vmlinux, apart
# from kjit's own reading of the live text (kernel_quirks.c): prints "yes"
# or "no"; exit 1 when the function or the handler cannot be found.
# Usage: tools/lab/rcu-reinit.sh    (env as the other lab scripts:
#   KJIT_BUILD, KJIT_KERNEL)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
syms="$here/../../tests/data/kallsyms-$ABI.txt.xz"
vmlinux="$("$here/fetch-kernel.sh" "${KJIT_BUILD:-$PWD/build/lab}/kernel" | tail -n1)/vmlinux"
[ -f "$syms" ] || { echo "rcu-reinit: $syms missing" >&2; exit 1; }
list="$(xzcat "$syms")"
start=$(awk '$3=="rcu_read_unlock_special"{print $1; exit}' <<<"$list")
end=$(awk -v r="$start" 'f && $1!=r {print $1; exit} $1==r{f=1}' <<<"$list")
handler=$(awk '$3=="rcu_preempt_deferred_qs_handler"{print $1; exit}' <<<"$list")
if [ -z "$start" ] || [ -z "$end" ] || [ -z "$handler" ]; then
  echo "rcu-reinit: rcu_read_unlock_special or its handler not in $syms" >&2; exit 1
fi
code="$(objdump -d --start-address="0x$start" --stop-address="0x$end" "$vmlinux")"
if grep -qi "0x$handler" <<<"$code"; then
  echo yes
else
  echo no
fi
