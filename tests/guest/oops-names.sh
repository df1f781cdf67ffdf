#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A WARN and an oops in translated code name the original function: one
# boot (tests/guest/oops-names-guest.sh) with kjit_hazard's deliberate
# WARN_ON_ONCE and NULL store inside an attached function.  The console
# must hold the kernel's WARN at kjit_hazard_entry+0x.., its oops (RIP in
# kjit-code-cache), kjit's line naming kjit_hazard_entry+0x.. and the
# original's frames; the titles syzkaller's report parser gives that
# console log (by its rules, tests/guest/oops_title.py) must name
# kjit_hazard_entry, neither report corrupted; everything before the
# deliberate WARN must be clean.  The console log stays in
# BUILD_DIR/guest-oops-names/console.log (tests/syzkaller/report-titles.sh
# runs syzkaller's own parser on it).
# Usage: tests/guest/oops-names.sh [BUILD_DIR]
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
KDIR="${KDIR:-/usr/src/linux-headers-$ABI}"
host_kjit oops-names

hz="$B/oops-names-module"; mkdir -p "$hz"
cp "$root/tests/guest/hazard/kjit_hazard.c" "$hz/"
# __FILE__ without the build directory: the WARNING line names
# kjit_hazard.c:LINE whatever the build path holds (syzkaller's SRC pattern
# stops at a '+', as in build-6.12.118+deb12-cloud-amd64).
# shellcheck disable=SC2016  # $(src) is Kbuild's, expanded by make
printf '%s\n' 'obj-m := kjit_hazard.o' 'ccflags-y += -fmacro-prefix-map=$(src)/=' > "$hz/Kbuild"
"$root/tools/lab/kbuild.sh" "$B" -- make -C "$KDIR" M="$hz" -j2 modules > "$hz/build.log" 2>&1 || { cat "$hz/build.log" >&2; exit 1; }

share="$B/guest-oops-names"
share_new "$share"
share_kjit "$share" "$ko" "$root"
cp "$hz/kjit_hazard.ko" "$share/"
share_script "$share" "$root/tests/guest/oops-names-guest.sh"
rc=0
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --tcg-single --timeout 300 || rc=$?
verdict_begin oops-names
VERDICT_LIST_CHECKS=1 VERDICT_LOG_UNTIL='kjit-crash: step warn' verdict_boot "$share" "$rc" OOPS-GUEST-DONE
grep -q 'kjit: RIP: 0010:kjit_hazard_entry+0x' "$share/console.log" ||
  verdict_bad "the console does not name kjit_hazard_entry"
want="TITLE: WARNING in kjit_hazard_entry
CORRUPTED: false
TITLE: BUG: unable to handle kernel NULL pointer dereference in kjit_hazard_entry
CORRUPTED: false"
titles="$(python3 "$root/tests/guest/oops_title.py" "$share/console.log" 2>&1)" || true
echo "oops-names: syzkaller's rules give: $(echo "$titles" | tr '\n' ' ')"
[ "$titles" = "$want" ] || verdict_bad "crash titles are not: $(echo "$want" | tr '\n' ' ')"
verdict_end; exit $?
