#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest for tests/guest/soak.sh.  Preamble parameters:
#   MINUTES (how long to keep rotating), SECS (seconds per stressor),
#   STRESSORS (the stress-ng stressors run per configuration),
#   TOOLS, CACHES (rotated: tool and cache size both change every run).
# First one native round (module loaded, nothing attached) records which
# stressors fail without kjit; then configurations rotate until MINUTES have
# passed.  Lines in soak.txt: "native S rc", "run N TOOL CACHE S rc".
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > soak.txt
sng() { timeout 120 ./lib/ld-linux-x86-64.so.2 --library-path ./lib ./stress-ng "$@"; }
now() { cut -d. -f1 /proc/uptime; }
mark() { echo "<2>kjit-soak: $*" > /dev/kmsg 2>/dev/null; }

insmod ./kjit.ko || { echo "insmod failed" >> soak.txt; exit 1; }
for s in $STRESSORS; do
  sng --"$s" 2 --timeout "${SECS}s" --verify --temp-path /tmp -q > /dev/null 2>&1
  echo "native $s $?" >> soak.txt
done
end=$(( $(now) + MINUTES * 60 ))
n=0
# Configurations in diagonal order: the first four already cover every
# tool and every cache size, whatever the time budget allows after them.
# shellcheck disable=SC2086  # word lists, split on purpose
set -- $TOOLS; ntools=$#
# shellcheck disable=SC2086
set -- $CACHES; ncaches=$#
while [ "$(now)" -lt "$end" ]; do
  n=$((n + 1))
  t=$(echo "$TOOLS" | cut -d' ' -f$(( (n - 1) % ntools + 1 )))
  c=$(echo "$CACHES" | cut -d' ' -f$(( ((n - 1) + (n - 1) / ntools) % ncaches + 1 )))
  mark "run $n: $t ${c}K"
  if ! $K config --tool "$t" --cache-kb "$c" > /dev/null; then
    echo "run $n $t $c config-failed 1" >> soak.txt
    continue
  fi
  $K attach all-syscalls > /dev/null 2>&1
  for s in $STRESSORS; do
    sng --"$s" 2 --timeout "${SECS}s" --verify --temp-path /tmp -q > /dev/null 2>&1
    echo "run $n $t $c $s $?" >> soak.txt
  done
  $K stats | awk -v n="$n" '$1=="reclaims"||$1=="entries"{printf "stats %s %s %s\n", n, $1, $2}' >> soak.txt
  $K detach all > /dev/null
  sync
done
if rmmod kjit; then echo "rmmod 0" >> soak.txt; else echo "rmmod 1" >> soak.txt; fi
guest_done SOAK-GUEST-DONE
