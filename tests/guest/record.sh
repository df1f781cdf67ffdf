#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `kjitctl record` in the guest, `kjitctl report` here: one boot
# (tests/guest/record-guest.sh writes the data files and the in-guest
# CHECK lines), then tests/guest/record-report.sh reads the files back on
# the host with the debug vmlinux (lcov, genhtml, chromium, drcov,
# branches, annotate, graph, bad input).
# Usage: tests/guest/record.sh [BUILD_DIR]
#   Needs BUILD_DIR/module/kjit.ko; fetches the debug vmlinux and the kernel
#   source once (tools/lab/fetch-debug.sh, cached under BUILD_DIR/lab/debug).
# Env: KJIT_RECORD_REUSE=1 skips the boot and re-checks the last share.
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
host_kjit record
cmake --build "$B" --target kjit-report >/dev/null
share="$B/guest-record"
verdict_begin record
rc=0
if [ "${KJIT_RECORD_REUSE:-0}" != 1 ]; then
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  share_program "$share" record_workload
  share_program "$share" kjitctl-other-abi
  share_script "$share" "$root/tests/guest/record-guest.sh"
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --tcg-single \
    --timeout 600 || rc=$?
fi
VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" RECORD-GUEST-DONE
verdict_expect_checks "$share" "$root/tests/guest/checks/record.list"
"$root/tests/guest/record-report.sh" "$B" "$share" || verdict_bad "the host's report checks (above)"
verdict_end; exit $?
