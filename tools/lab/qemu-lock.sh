# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The machine's QEMU lock, in host cores: a guest on single-threaded TCG
# keeps one core busy, one on multi-threaded TCG (or a bench, a syzkaller
# run) keeps them all.  Two TCG guests on more threads than cores starve
# each other's vCPUs into false soft lockups and timeouts, so the guests
# running at once hold no more cores than the machine has (at most two:
# the suite runs ctest -j2).  Each core is a lock file: $KJIT_QEMU_LOCK
# (default /tmp/kjit-qemu.lock) and $KJIT_QEMU_LOCK.1.  Sourced.
#
# qemu_lock_one: waits for any one core's lock (file descriptor 9); it never
# waits while holding one, so two callers cannot deadlock.
# qemu_lock_all: waits for every core's lock, in order (descriptors 9, 8).
# qemu_lock_for ACCEL: qemu_lock_one for QEMU's -accel tcg,thread=single,
# qemu_lock_all for anything else.
# qemu_unlock: releases what the caller holds.  The locks also go when the
# process exits.

qemu_lock_file() { local base="${KJIT_QEMU_LOCK:-/tmp/kjit-qemu.lock}"; [ "$1" = 0 ] && echo "$base" || echo "$base.$1"; }

qemu_lock_cores() { local n; n=$(nproc 2>/dev/null || echo 1); [ "$n" -ge 2 ] && echo 2 || echo 1; }

qemu_lock_one() {
  local cores i
  cores=$(qemu_lock_cores)
  while :; do
    for ((i = 0; i < cores; i++)); do
      exec 9>"$(qemu_lock_file "$i")"
      flock -n 9 && return 0
      exec 9>&-
    done
    sleep 1
  done
}

qemu_lock_all() {
  exec 9>"$(qemu_lock_file 0)"
  flock 9
  if [ "$(qemu_lock_cores)" -ge 2 ]; then
    exec 8>"$(qemu_lock_file 1)"
    flock 8
  fi
}

qemu_lock_for() { if [ "$1" = tcg,thread=single ]; then qemu_lock_one; else qemu_lock_all; fi; }

qemu_unlock() { exec 9>&- 8>&-; }
