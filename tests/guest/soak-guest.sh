#!/bin/sh
# Runs in the guest for tests/guest/soak.sh.  Preamble parameters:
#   MINUTES (how long to keep rotating), SECS (seconds per stressor),
#   STRESSORS (the stress-ng stressors run per configuration),
#   TOOLS, CACHES (rotated: every tool with every cache size, in turn).
# First one native round (module loaded, nothing attached) records which
# stressors fail without kjit; then configurations rotate until MINUTES have
# passed.  Lines in soak.txt: "native S rc", "run N TOOL CACHE S rc".
set -u
K=./kjitctl
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
while [ "$(now)" -lt "$end" ]; do
  for t in $TOOLS; do
    for c in $CACHES; do
      [ "$(now)" -lt "$end" ] || break 2
      n=$((n + 1))
      mark "run $n: $t ${c}K"
      $K config --tool "$t" --cache-kb "$c" > /dev/null || { echo "run $n $t $c config-failed 1" >> soak.txt; continue; }
      $K attach all-syscalls > /dev/null 2>&1
      for s in $STRESSORS; do
        sng --"$s" 2 --timeout "${SECS}s" --verify --temp-path /tmp -q > /dev/null 2>&1
        echo "run $n $t $c $s $?" >> soak.txt
      done
      $K stats | awk -v n="$n" '$1=="reclaims"||$1=="entries"{printf "stats %s %s %s\n", n, $1, $2}' >> soak.txt
      $K detach all > /dev/null
      sync
    done
  done
done
rmmod kjit && echo "rmmod 0" >> soak.txt || echo "rmmod 1" >> soak.txt
echo SOAK-GUEST-DONE
