#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/demo.sh:
# docs/by-hand.md's steps, each command echoed before its output, a
# tool of one's own as a plugin module, and a recording.  Everything goes to
# demo.txt, which the host shows; the capture (uname.kjitcap) is replayed
# and the recording (demo.data) reported on the host.
PATH="$PWD:$PATH"
exec > demo.txt 2>&1
# Echoes a command line, then runs it.
run() {
  echo "\$ $*"
  sh -c "$*"
}
insmod ./kjit.ko
echo "### 1. Count the instructions a system call executes"
run "kjitctl config --tool icount && kjitctl attach getppid openat"
run "cat /proc/version > /dev/null; kjitctl show"
kjitctl detach all > /dev/null
echo
echo "### 2. Find the hottest basic blocks"
run "kjitctl config --tool bbcount && kjitctl attach openat read close"
run "for i in \$(seq 10); do cat /proc/version > /dev/null; done"
run "kjitctl blocks | sort -k2 -nr | head -10"
kjitctl detach all > /dev/null
echo
echo "### 3. See the call tree, as flame-graph stacks"
run "kjitctl config --tool callstack && kjitctl attach openat"
run "cat /proc/version > /dev/null; kjitctl show --folded | sort -k2 -nr | head -10"
run "kjitctl calls | sort -k2 -nr | head -10"
kjitctl detach all > /dev/null
echo
echo "### 4. Capture an invocation (replayed on the host below)"
run "kjitctl config --tool none > /dev/null; kjitctl capture --syscall newuname -o uname.kjitcap -- uname -a"
echo
echo "### 5. Look at the engine, and let go"
run "kjitctl stats | head -12"
run "kjitctl detach all"
echo
echo "### A tool of your own: the icount tool as a plugin module (plugins/linux/icount_mod.c)"
run "insmod ./kjit_icount.ko && kjitctl attach clone"
run "./workload forks 20; cat /sys/module/kjit_icount/parameters/count"
kjitctl detach all > /dev/null
rmmod kjit_icount
echo
echo "### 6. Record a workload in one command (reported on the host below)"
[ -f /etc/hostname ] || echo kjit-guest > /etc/hostname
run "kjitctl record -t branches -e openat,read,close -o demo.data -c 'cat /etc/hostname; read -r x < /etc/hostname'"
rmmod kjit
sync
