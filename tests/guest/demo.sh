#!/bin/bash
# `./kjit-lab demo`: boots the guest, loads kjit.ko and shows
#  1. the JIFL paper's Figure 3: instructions executed by clone while a small
#     workload forks (the built-in icount tool attached to __x64_sys_clone,
#     then the same with the Figure 3 plugin module);
#  2. a block count of openat/read/close (per block start address);
#  3. a call trace of openat as folded stacks, and per-function calls.
# Usage: tests/guest/demo.sh BUILD_DIR   (kjit.ko from os/linux/build.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
ko="$B/module/kjit.ko"
[ -f "$ko" ] || { echo "demo: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
"$root/plugins/linux/build.sh" "$B" > "$B/plugins-linux.log" 2>&1 || { cat "$B/plugins-linux.log" >&2; exit 1; }
share="$B/guest-demo"
rm -rf "$share"; mkdir -p "$share"
cp "$ko" "$B/plugins-linux/kjit_fig3_icount.ko" "$share/"
gcc -O2 -static -Wall -Wno-unused-result -o "$share/workload" "$root/tests/guest/workload.c"
gcc -O2 -static -Wall -I "$root/os/linux" -o "$share/kjitctl" "$root/tools/kjitctl/kjitctl.c"
cat > "$share/demo-guest.sh" <<'GUEST'
#!/bin/sh
K=./kjitctl
exec > demo.txt 2>&1
insmod ./kjit.ko
echo "### 1. Figure 3: instructions executed by clone while 20 processes fork"
$K config --tool icount > /dev/null
$K attach clone
./workload forks 20
$K report
$K stats | grep -E '^(entries|blocks_built|cache_bytes_used) '
$K detach all > /dev/null
echo "--- the same as a plugin module (plugins/linux/fig3_icount.c)"
$K config --tool none > /dev/null
insmod ./kjit_fig3_icount.ko
$K attach clone > /dev/null
./workload forks 20
echo "instructions (kjit_fig3_icount.ko): $(cat /sys/module/kjit_fig3_icount/parameters/count)"
$K detach all > /dev/null
rmmod kjit_fig3_icount
echo
echo "### 2. Block count: openat, read, close while cat runs 10 times (top 25 blocks)"
$K config --tool bbcount > /dev/null
$K attach openat read close > /dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do cat /proc/version > /dev/null; done
$K blocks | sort -k2 -n -r | head -25
$K detach all > /dev/null
echo
echo "### 3. Call trace of openat (folded stacks, ready for flamegraph.pl)"
$K config --tool callstack > /dev/null
$K attach openat > /dev/null
cat /proc/version > /dev/null
$K report --folded | sort -k2 -n -r | head -40
echo "--- calls per function (top 20)"
$K calls | sort -k2 -n -r | head -20
$K detach all > /dev/null
rmmod kjit
sync
GUEST
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/demo-guest.sh" --smp 2 --timeout 600 || { echo "demo: guest failed" >&2; tail -30 "$share/console.log" >&2; exit 1; }
cat "$share/demo.txt"
