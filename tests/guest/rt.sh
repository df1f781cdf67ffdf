#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What only PREEMPT_RT has, on Debian's rt flavour (tools/kernel-flavours; its
# image and kjit.ko in BUILD_DIR/flavours/ABI, as tests/guest/flavours.sh
# keeps them), one boot with two vCPUs (tests/guest/rt-guest.sh):
# sleeping spinlocks (kjit_rtlock's contended spinlock_t section, an
# rtmutex on RT) blocked on from translated code, and threaded interrupts
# (the NVMe completion handler translated in its irq thread).
# Usage: tests/guest/rt.sh BUILD_DIR
# Env: KJIT_RT_KERNEL (default the rt flavour of tools/kernel-flavours).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
f="${KJIT_RT_KERNEL:-$(grep -- '-rt-amd64$' "$root/tools/kernel-flavours" | head -n1)}"
# shellcheck source=tests/guest/flavour-lab.sh
. "$root/tests/guest/flavour-lab.sh"
flavour_lab rt "$B" "$f" || exit $?
d="$flavour_dir"
[ "$("$root/tools/lab/preempt-modes.sh" --first)" = rt ] || { echo "rt: $f is not a PREEMPT_RT kernel" >&2; exit 2; }
flavour_module rt "$f" || exit 1
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
m="$d/rtlock-module"; mkdir -p "$m"
cp "$root/tests/guest/rtlock/kjit_rtlock.c" "$m/"
echo 'obj-m := kjit_rtlock.o' > "$m/Kbuild"
make -C "/usr/src/linux-headers-$f" M="$m" -j2 modules > "$m/build.log" 2>&1 || { cat "$m/build.log" >&2; exit 1; }

share_guest_bin "$B"
share="$d/guest-rt"
share_new "$share"
share_kjit "$share" "$d/module/kjit.ko" "$root"
cp "$m/kjit_rtlock.ko" "$share/"
share_program "$share" rt_contend
mkdir -p "$share/data"
head -c 4194304 /dev/urandom > "$share/data/blob"   # 4 MiB read with O_DIRECT: ~1,000 completions
share_script "$share" "$root/tests/guest/rt-guest.sh"
rc=0
# Multi-threaded TCG: the rtlock writers must find the lock's owner off its
# CPU to sleep (a waiter spins while the owner runs), and under
# single-threaded TCG no writer slept in 4 boots of 5 (the vCPUs take turns,
# so the owner always looked running).
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --timeout 420 || rc=$?
verdict_begin rt
VERDICT_LIST_CHECKS=1 verdict_boot "$share" "$rc" RT-GUEST-DONE
verdict_expect_checks "$share" "$root/tests/guest/checks/rt.list"
verdict_end; exit $?
