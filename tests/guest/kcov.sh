#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit's KCOV device on the stock kernel (tests/guest/kcov-guest.sh, the
# client tests/guest/kcov_client.c): coverage of the kcov.rst example's
# calls, two threads, disable, CMP records, a blocking read, a full buffer,
# the real KCOV's error codes, unload under a client; once per preemption
# mode.
# Usage: tests/guest/kcov.sh BUILD_DIR
# Env: KJIT_KCOV_MODES ("voluntary full").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
ko="$B/module/kjit.ko"
[ -f "$ko" ] || { echo "kcov: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
# shellcheck source=tests/guest/share.sh
. "$root/tests/guest/share.sh"
# shellcheck source=tests/guest/verdict.sh
. "$root/tests/guest/verdict.sh"
share_guest_bin "$B"
verdict_begin kcov
for mode in ${KJIT_KCOV_MODES:-voluntary full}; do
  share="$B/guest-kcov-$mode"
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  share_program "$share" kcov_client
  share_script "$share" "$root/tests/guest/kcov-guest.sh"
  rc=0
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --timeout 600 \
    --append "preempt=$mode" || rc=$?
  VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" KCOV-GUEST-DONE "$mode"
done
# The same PCs in kjitctl report: a trace becomes blocks (text, drcov).
cmake --build "$B" --target kjit-report > /dev/null
dbg="$(KJIT_BUILD="$B/lab" "$root/tools/lab/fetch-debug.sh")"
pcs="$share/open-hit.pcs" R="$share/report"
mkdir -p "$R"
if "$B/guest-bin/kjitctl" report --kcov "$pcs" --vmlinux "$dbg/vmlinux-dbg" > "$R/text.txt" 2> "$R/text.err" \
   && grep -q ' do_sys_openat2$' "$R/text.txt"; then
  echo "CHECK report_kcov_text PASS"
else
  verdict_bad "report_kcov_text: $(cat "$R/text.err")"
fi
distinct=$(grep '^0x' "$pcs" | awk '{print $1}' | sort -u | wc -l)
"$B/guest-bin/kjitctl" report --kcov "$pcs" --vmlinux "$dbg/vmlinux-dbg" --format drcov -o "$R/kcov.drcov"
blocks=$(sed -n 's/^BB Table: \([0-9]*\) bbs$/\1/p' "$R/kcov.drcov")
if [ "${blocks:-0}" = "$distinct" ]; then
  echo "CHECK report_kcov_drcov PASS $blocks blocks"
else
  verdict_bad "report_kcov_drcov: drcov ${blocks:-?} blocks, $distinct distinct PCs"
fi
verdict_end; exit $?
