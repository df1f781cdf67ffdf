#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The title syzkaller's own report parser (pkg/report, as syz-manager and
# tools/syz-symbolize use it) gives a WARN and an oops in translated code:
# builds tests/syzkaller/report_title.go inside a syzkaller source tree,
# runs it on the console log of guest.oops_names (kjit_hazard's WARN and
# NULL store in an attached function), and checks that both crashes are
# titled after the original function, kjit_hazard_entry, that neither
# report is corrupted, and that tests/guest/oops_title.py (the same rules,
# used by ./kjit-lab test) gives the same titles.  Outside ctest: CI cannot fetch syzkaller.  See README.md.
# Usage: tests/syzkaller/report-titles.sh SYZKALLER_SRC [CONSOLE_LOG] [BUILD_DIR]
#   CONSOLE_LOG defaults to BUILD_DIR/guest-oops-names/console.log (left by
#   tests/guest/oops-names.sh); BUILD_DIR to build.  The tool is written to
#   SYZKALLER_SRC/tools/kjit-report-title/ (it must build inside syzkaller's
#   module, offline, from its vendor directory) and built to
#   BUILD_DIR/syzkaller-title/, with a copy of the log it judged.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[ $# -ge 1 ] || { sed -n '2,/^set /p' "$0" | sed '$d' >&2; exit 2; }
syz="$(cd "$1" && pwd)"
B="$(mkdir -p "${3:-$root/build}" && cd "${3:-$root/build}" && pwd)"
log="${2:-$B/guest-oops-names/console.log}"
want="TITLE: WARNING in kjit_hazard_entry
CORRUPTED: false
TITLE: BUG: unable to handle kernel NULL pointer dereference in kjit_hazard_entry
CORRUPTED: false"
[ -f "$syz/pkg/report/linux.go" ] || { echo "report-titles: $syz is no syzkaller tree" >&2; exit 2; }
[ -f "$log" ] || { echo "report-titles: $log missing (run tests/guest/oops-names.sh first)" >&2; exit 2; }

out="$B/syzkaller-title"; mkdir -p "$out"
cp "$log" "$out/console.log"
mkdir -p "$syz/tools/kjit-report-title"
cp "$root/tests/syzkaller/report_title.go" "$syz/tools/kjit-report-title/main.go"
(cd "$syz" && GOPROXY=off GOFLAGS=-mod=vendor GOTOOLCHAIN=local \
  nice -n 19 go build -p 1 -o "$out/kjit-report-title" ./tools/kjit-report-title)
echo "report-titles: syzkaller $(git -C "$syz" rev-parse --short HEAD 2>/dev/null || echo '(no git)') on $out/console.log"
"$out/kjit-report-title" "$out/console.log" | tee "$out/syzkaller.txt"
python3 "$root/tests/guest/oops_title.py" "$out/console.log" > "$out/rules.txt" || true
echo "report-titles: tests/guest/oops_title.py gives: $(tr '\n' ' ' < "$out/rules.txt")"

# "CORRUPTED: false ()": the reason in parentheses is syzkaller's alone
sed 's/^\(CORRUPTED: [a-z]*\) (.*)$/\1/' "$out/syzkaller.txt" > "$out/syzkaller-titles.txt"
fail=0
[ "$(cat "$out/syzkaller-titles.txt")" = "$want" ] ||
  { echo "report-titles: FAIL: syzkaller does not give: $(echo "$want" | tr '\n' ' ')" >&2; fail=1; }
cmp -s "$out/rules.txt" "$out/syzkaller-titles.txt" ||
  { echo "report-titles: FAIL: tests/guest/oops_title.py disagrees with syzkaller" >&2; fail=1; }
[ $fail = 0 ] && echo "report-titles: PASS"
exit $fail
