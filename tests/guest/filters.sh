#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# perf's habits in the guest (tests/guest/filters-guest.sh, 2 vCPUs):
# `kjitctl record -a`, --tid, --comm, --cpu, --cgroup and their combination,
# and `kjitctl top` (intervals, sorted rates, a filter, Ctrl-C detaching).
# Usage: tests/guest/filters.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
ko="$B/module/kjit.ko"
[ -f "$ko" ] || { echo "filters: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
# shellcheck source=tests/guest/share.sh
. "$root/tests/guest/share.sh"
# shellcheck source=tests/guest/verdict.sh
. "$root/tests/guest/verdict.sh"
share_guest_bin "$B"
share="$B/guest-filters"
verdict_begin filters
rc=0
share_new "$share"
share_kjit "$share" "$ko" "$root"
share_program "$share" filter_workload
share_script "$share" "$root/tests/guest/filters-guest.sh"
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --tcg-single --timeout 600 || rc=$?
VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" FILTERS-GUEST-DONE
verdict_expect_checks "$share" "$root/tests/guest/checks/filters.list"
verdict_end; exit $?
