#!/bin/bash
# `./kjit-lab demo`: boots the guest, loads kjit.ko and runs the README's
# "First steps" (instruction count, hottest blocks, folded call stacks, a
# capture, the engine's statistics) and a plugin module; then replays the
# guest's capture here with kjit-sim.
# Usage: tests/guest/demo.sh BUILD_DIR   (kjit.ko from os/linux/build.sh)
# The guest side is tests/guest/demo-guest.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
ko="$B/module/kjit.ko"
[ -f "$ko" ] || { echo "demo: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
"$root/plugins/linux/build.sh" "$B" > "$B/plugins-linux.log" 2>&1 || { cat "$B/plugins-linux.log" >&2; exit 1; }
# shellcheck source=tests/guest/share.sh
. "$root/tests/guest/share.sh"
share_guest_bin "$B"
share="$B/guest-demo"
share_new "$share"
share_kjit "$share" "$ko" "$root"
cp "$B/plugins-linux/kjit_fig3_icount.ko" "$share/"
share_program "$share" workload
share_script "$share" "$root/tests/guest/demo-guest.sh"
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --timeout 600 || { echo "demo: guest failed" >&2; tail -30 "$share/console.log" >&2; exit 1; }
cat "$share/demo.txt"
echo
echo "### 4, continued: the capture replayed on the host, original and translated"
echo "\$ kjit-sim replay uname.kjitcap"
"$B/os/userspace-sim/kjit-sim" replay "$share/uname.kjitcap"
