#!/bin/sh
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/demo.sh;
# everything it prints goes to demo.txt, which the host shows.
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
for _ in 1 2 3 4 5 6 7 8 9 10; do cat /proc/version > /dev/null; done
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
