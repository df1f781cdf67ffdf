#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kjit bench: kjit against kprobes, ftrace and bpftrace, in one boot
# per configuration with its native baseline, under -icount (guest clock =
# guest instructions); TCG wall clock on request (BENCH_MODES).
# Regenerates bench/results/{RESULTS.md,summary.json,*.svg}.
# Each (mode, configuration) boot gets stamp.json beside its results: the
# run (this invocation's start, UTC), commit, dirty tree, boot date, mode,
# repetitions (bench/lib/stamps.py); analyze.py puts the stamp on its row,
# and rows this run did not measure keep their own, older stamps.
# Exit status 1 when a boot of the newest run failed or one of its rows
# failed a check (bench/lib/checks.py); the results are written anyway.
#
# Usage: bench/run.sh BUILD_DIR          (what `./kjit-lab bench` runs)
#   BUILD_DIR holds module/kjit.ko (built here if missing); the bench caches
#   its Debian guest root and its per-boot shares under BUILD_DIR/bench/.
# Env: BENCH_CONFIGS (default: all, below), BENCH_MODES ("icount"; "tcg
#      icount" adds TCG wall clock: its natives spread by up to +-40% in one
#      boot, so no target is set on it and the default run leaves it out),
#      BENCH_REPS_TCG (3), BENCH_REPS_ICOUNT (3), BENCH_SECS (0.15: lmb
#      budget per benchmark), BENCH_MACRO_SECS (2: wrk duration),
#      BENCH_SMP (1: one vCPU, so pipe/fork ping-pong is not dominated by
#      TCG's cross-vCPU wake-up latency, and -icount is single-threaded anyway),
#      BENCH_JOBS (-icount boots at once: one per host core, at most two),
#      BENCH_ANALYZE_ONLY=1 (re-make the results from the last runs),
#      BENCH_TIMEOUT (1800: wall-clock seconds per boot, above what the
#      slowest boots take on 2 cores, each boot's time is in the log).
set -uo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tools/lab/qemu-lock.sh
. "$top/tools/lab/qemu-lock.sh"
B="$(mkdir -p "${1:-$top/build}" && cd "${1:-$top/build}" && pwd)"
W="$B/bench"; mkdir -p "$W"
ALL="native kjit-none kjit-none-nofollow kjit-none-ipmodify kjit-none-notrace kjit-none-stackret kjit-syscount kjit-calltrace kjit-bbcount kjit-bb-notrace
 kjit-icount kjit-icount-dynpcpu
 kjit-bb-noliveness kjit-bb-noinline kjit-bb-noopt
 kjit-cache64 kjit-cache256 kjit-cache1024 kjit-cache4096 kjit-kcov-pc kjit-kcov-cmp kjit-kcov-beside
 kjit-bb-switching
 kprobe-sys kprobe-call kprobe-bb ftrace-func bpftrace"
CONFIGS="${BENCH_CONFIGS:-$ALL}"
MODES="${BENCH_MODES:-icount}"
t0=$(date +%s)
run_id="$(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%SZ)"
commit="$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)"
# Dirty: tracked changes or new files that are not ignored (a new source
# file is built too); bench/results is what this run rewrites, not an input.
dirty=false
[ -n "$(git -C "$top" status --porcelain -- . ':!bench/results' 2>/dev/null | head -1)" ] && dirty=true

if [ "${BENCH_ANALYZE_ONLY:-0}" != 1 ]; then
  # --- build ------------------------------------------------------------------
  if [ ! -f "$B/module/kjit.ko" ]; then
    if ! { cmake -S "$top" -B "$B" >/dev/null && cmake --build "$B" -j2 --target kjit_engine_kernel \
             && "$top/os/linux/build.sh" "$B"; }; then
      echo "bench: kjit build failed" >&2; exit 1
    fi
  fi
  bin="$W/bin"; rm -rf "$bin"; mkdir -p "$bin"
  # Guest programs are CMake targets (tests/guest/CMakeLists.txt).
  cmake -S "$top" -B "$B" >/dev/null && cmake --build "$B" --target lmb lmb-hello kjitctl >/dev/null || exit 1
  cp "$B/guest-bin/lmb" "$B/guest-bin/lmb-hello" "$B/guest-bin/kjitctl" "$bin/" || exit 1
  "$top/bench/kprobes/build.sh" "$W/kprobes" >/dev/null || exit 1
  cp "$W/kprobes/kprobench.ko" "$B/module/kjit.ko" "$bin/"
  ko_sha="$(sha256sum "$bin/kjit.ko" | cut -c1-16)"
  # kjit.ko is built only when missing: say so when it predates the commit
  # the stamps name (its sha256 is in every stamp).
  if [ "$(stat -c %Y "$B/module/kjit.ko")" -lt "$(git -C "$top" log -1 --format=%ct 2>/dev/null || echo 0)" ]; then
    echo "bench: warning: $B/module/kjit.ko is older than commit $commit (remove it to rebuild)" >&2
  fi
  cp /bin/busybox "$bin/busybox"   # insmod/rmmod for the Debian minbase root
  for a in insmod rmmod lsmod; do ln -s busybox "$bin/$a"; done
  root="$("$top/bench/lib/make-root.sh" "$W")" || exit 1

  # --- one boot per (mode, configuration) -----------------------------------
  # boot_one MODE REPS FLAG CFG: the configuration's boot, its stamp and rc.
  boot_one() {
    local mode="$1" reps="$2" flag="$3" cfg="$4" share s rc
    share="$W/runs/$mode/$cfg"; rm -rf "$share"; mkdir -p "$share"
    cp -a "$bin" "$share/bin"
    cp "$top/bench/guest/driver.sh" "$top/bench/guest/kjit-adapter.sh" "$share/"
    printf 'CONFIG=%s\nREPS=%s\nSECS=%s\nMACRO_SECS=%s\nMODE=%s\n' "$cfg" "$reps" \
      "${BENCH_SECS:-0.15}" "${BENCH_MACRO_SECS:-2}" "$mode" > "$share/config.env"
    s=$(date +%s)
    printf '{"run": "%s", "commit": "%s", "dirty": %s, "date": "%s", "mode": "%s", "reps": %s, "secs": "%s", "macro_secs": "%s", "smp": "%s", "kjit_ko_sha256": "%s"}\n' \
      "$run_id" "$commit" "$dirty" "$(date -u -d "@$s" +%Y-%m-%dT%H:%M:%SZ)" "$mode" "$reps" \
      "${BENCH_SECS:-0.15}" "${BENCH_MACRO_SECS:-2}" "${BENCH_SMP:-1}" "$ko_sha" > "$share/stamp.json"
    "$top/bench/lib/boot.sh" --share "$share" --script "$top/bench/guest/run.sh" \
      --root "$root" ${flag:+"$flag"} --smp "${BENCH_SMP:-1}" --timeout "${BENCH_TIMEOUT:-1800}" >"$share/boot.log" 2>&1
    rc=$?
    echo "$rc" > "$share/boot.rc"
    echo "bench: $mode $cfg: boot rc $rc, $(( $(date +%s) - s )) s, $(cat "$share/out/$cfg/status" 2>/dev/null || echo no-status)" >&2
  }
  # -icount boots may run side by side (BENCH_JOBS): their clock counts
  # guest instructions, which another guest on the next core does not
  # change.  TCG wall-clock boots run alone (boot.sh takes every core).
  jobs_icount="${BENCH_JOBS:-$(qemu_lock_cores)}"
  [ "$jobs_icount" -le "$(qemu_lock_cores)" ] || jobs_icount="$(qemu_lock_cores)"
  for mode in $MODES; do
    reps="${BENCH_REPS_TCG:-3}"; flag=""; jobs=1
    [ "$mode" = icount ] && { reps="${BENCH_REPS_ICOUNT:-3}"; flag=--icount; jobs="$jobs_icount"; }
    for cfg in $CONFIGS; do
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
      if [ "$jobs" -gt 1 ]; then boot_one "$mode" "$reps" "$flag" "$cfg" & else boot_one "$mode" "$reps" "$flag" "$cfg"; fi
    done
    wait
  done
fi

# --- results -------------------------------------------------------------------
# The elapsed time goes into RESULTS.md only when this invocation measured.
elapsed=(); [ "${BENCH_ANALYZE_ONLY:-0}" != 1 ] && elapsed=("$(( $(date +%s) - t0 ))")
# analyze.py exits 3 when rows of the newest run cannot be judged (a boot
# that failed, a failed check): the results are written, the run fails.
python3 "$top/bench/lib/analyze.py" "$W/runs" "$top/bench/results" "${elapsed[@]}"
arc=$?
[ "$arc" = 0 ] || [ "$arc" = 3 ] || exit 1
if command -v gnuplot >/dev/null; then
  (cd "$top/bench/results" && for g in *.gp; do [ -f "$g" ] && gnuplot "$g"; done)
else
  echo "bench: gnuplot missing (apt-get install gnuplot-nox): no plots" >&2
fi
echo "bench: results in bench/results/ ($(( $(date +%s) - t0 )) s)" >&2
[ "$arc" = 0 ] || { echo "bench: FAIL: rows of the newest run not judged (analyze.py's list above)" >&2; exit 1; }
