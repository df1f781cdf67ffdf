#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# perf's habits in the guest (tests/guest/filters-guest.sh, 2 vCPUs):
# `kjitctl record -a`, --tid, --comm, --cpu, --cgroup and their combination,
# and `kjitctl top` (intervals, sorted rates, a filter, Ctrl-C detaching).
# Usage: tests/guest/filters.sh [BUILD_DIR]
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
host_kjit filters
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
