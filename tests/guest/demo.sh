#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `./kjit-lab demo`: boots the guest, loads kjit.ko and runs the steps of
# docs/by-hand.md (instruction count, hottest blocks, folded call stacks, a
# capture, the engine's statistics), a plugin module and a recording; then
# replays the guest's capture here with kjit-sim and reports the recording
# with the kernel's debug vmlinux: branch table, coverage HTML page.
# Usage: tests/guest/demo.sh BUILD_DIR   (kjit.ko from os/linux/build.sh)
# The guest side is tests/guest/demo-guest.sh.
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
host_kjit demo
"$root/plugins/linux/build.sh" "$B" > "$B/plugins-linux.log" 2>&1 || { cat "$B/plugins-linux.log" >&2; exit 1; }
share="$B/guest-demo"
share_new "$share"
share_kjit "$share" "$ko" "$root"
cp "$B/plugins-linux/kjit_icount.ko" "$share/"
share_program "$share" workload
share_script "$share" "$root/tests/guest/demo-guest.sh"
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --timeout 600 || { echo "demo: guest failed" >&2; tail -30 "$share/console.log" >&2; exit 1; }
cat "$share/demo.txt"
echo
echo "### 4, continued: the capture replayed on the host, original and translated"
echo "\$ kjit-sim replay uname.kjitcap"
"$B/tools/kjit-sim/kjit-sim" replay "$share/uname.kjitcap"
echo
echo "### 6, continued: the recording reported here, with the kernel's debug vmlinux"
dbg="$("$root/tools/lab/fetch-debug.sh")"
cmake --build "$B" --target kjit-report > /dev/null
K="$B/guest-bin/kjitctl"
echo "\$ kjitctl report -i demo.data --vmlinux vmlinux-dbg | head -12"
"$K" report -i "$share/demo.data" --vmlinux "$dbg/vmlinux-dbg" | head -12 || true
echo "\$ kjitctl report -i demo.data --vmlinux vmlinux-dbg --format lcov --source-root linux-source/ -o kjit.info"
"$K" report -i "$share/demo.data" --vmlinux "$dbg/vmlinux-dbg" --format lcov --source-root "$dbg/linux-source/" \
  -o "$share/kjit.info"
echo "\$ genhtml --branch-coverage -q -o html kjit.info"
genhtml --branch-coverage -q -o "$share/html" "$share/kjit.info" 2>&1 | grep -v '^Overall\|^  ' || true
echo "\$ kjitctl report -i demo.data --vmlinux vmlinux-dbg --format branches | head -15"
"$K" report -i "$share/demo.data" --vmlinux "$dbg/vmlinux-dbg" --format branches | head -15 || true
page=$(find "$share/html" -path '*fs/open.c.gcov.html' | head -1)
echo
echo "coverage report: $share/html/index.html"
echo "fs/open.c line by line, with its branches: ${page:-(not found)}"
