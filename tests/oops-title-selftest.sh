#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ctest oops_title.selftest: tests/guest/oops_title.py (syzkaller's title
# rules, used by guest.oops_names) on two console logs of the same oops in
# translated code (tests/data/oops/): with the code cache's old symbol, an
# identifier, the title names the cache and the report is corrupted (no
# frame after "Call Trace:"), which syzkaller's own parser said of that log
# too; with kjit's RIP line and original frames, the title names
# kjit_hazard_entry and the report is whole.
# Usage: tests/oops-title-selftest.sh REPO_ROOT
set -euo pipefail
root="${1:?usage: $0 REPO_ROOT}"
d="$root/tests/data/oops" bad=0
expect() {
  local got
  got="$(python3 "$root/tests/guest/oops_title.py" "$d/$1" | tr '\n' '|')"
  if [ "$got" = "$2" ]; then echo "oops-title: $1: $got"; else
    echo "oops-title: $1: got '$got', want '$2'" >&2; bad=1; fi
}
expect cache-symbol-identifier.log \
  "TITLE: BUG: unable to handle kernel NULL pointer dereference in kjit_cache_area|CORRUPTED: true|"
expect cache-symbol-original-frames.log \
  "TITLE: BUG: unable to handle kernel NULL pointer dereference in kjit_hazard_entry|CORRUPTED: false|"
exit $bad
