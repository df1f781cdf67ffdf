#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest smoke test for kjit.ko (host side; boots the pinned kernel under TCG).
# Usage: tests/guest/smoke.sh [BUILD_DIR]    (default: ./build)
#   Needs BUILD_DIR/module/kjit.ko (os/linux/build.sh BUILD_DIR).
#   Env: KJIT_SMOKE_ITERS (200), KJIT_SMOKE_FUNCS ("__x64_sys_getppid __x64_sys_openat"),
#        KJIT_SMOKE_APPEND (extra kernel command line, e.g. "preempt=full"),
#        KJIT_SMOKE_WIDE=1 (FUNCS += read write newfstat close newuname pipe2),
#        KJIT_SMOKE_ALL=1 (then every system call at once under block counting:
#        the per-flavour smoke run, tests/guest/flavours.sh), KJIT_SMOKE_KO
#        (the module, default BUILD_DIR/module/kjit.ko), KJIT_SMOKE_SHARE (the
#        guest's share directory, default BUILD_DIR/guest-smoke).
# A quick single-boot check of the module (the full one is run-suite.sh).
# In the guest (tests/guest/smoke-guest.sh, --smp 2): insmod; the workload natively; attach to each
# function in turn and run the workload again (two copies in parallel); read
# stats; detach; run natively again; re-attach all and rmmod while the
# workload runs (it must be running, through kjit, when rmmod starts).
# Fails when: a step fails, any workload output differs from the native one
# (syscall results, -EFAULT for a bad pointer, -ENOENT), blocks_built or
# dispatcher_exits is 0, or tests/guest/verdict.sh fails the boot (kernel
# log, taint).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
ITERS="${KJIT_SMOKE_ITERS:-200}"
FUNCS="${KJIT_SMOKE_FUNCS:-__x64_sys_getppid __x64_sys_openat}"
APPEND="${KJIT_SMOKE_APPEND:-}"
if [ "${KJIT_SMOKE_WIDE:-0}" = 1 ]; then
  FUNCS="$FUNCS __x64_sys_read __x64_sys_write __x64_sys_newfstat __x64_sys_close __x64_sys_newuname __x64_sys_pipe2"
fi
host_kjit smoke "${KJIT_SMOKE_KO:-}"

share="${KJIT_SMOKE_SHARE:-$B/guest-smoke${KJIT_SMOKE_WIDE:+-wide}}"
share_new "$share"
share_kjit "$share" "$ko" "$root"
share_program "$share" syscalls
ALL="${KJIT_SMOKE_ALL:-0}"
share_script "$share" "$root/tests/guest/smoke-guest.sh" ITERS="$ITERS" FUNCS="$FUNCS" ALL="$ALL"

rc=0
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --tcg-single --timeout 600 \
  ${APPEND:+--append "$APPEND"} || rc=$?
verdict_begin smoke
bad() { verdict_bad "$@"; }
verdict_status "$share" "$rc"
verdict_done "$share" SMOKE-GUEST-DONE
grep -q '^workload running at rmmod: yes' "$share/guest.log" 2>/dev/null || bad "rmmod was not under load"
read -r -a funcs <<< "$FUNCS"
n=${#funcs[@]}
cmp -s "$share/native.b" "$share/unload.a" || { bad "output differs from native: unload.a (rmmod under load)"; diff "$share/native.b" "$share/unload.a" >&2 || true; }
runs="$(seq 1 "$n") after"
[ "$ALL" != 1 ] || runs="$runs all"
for i in $runs; do
  for s in a b; do
    case "$i" in after|all) f="$share/$i.$s" ;; *) f="$share/kjit$i.$s" ;; esac
    if ! cmp -s "$share/native.$s" "$f"; then
      bad "output differs from native: $(basename "$f")"; diff "$share/native.$s" "$f" >&2 || true
    fi
  done
done
grep -q '^bad_pointer_efault yes' "$share/native.a" 2>/dev/null || bad "native run itself is wrong"
last="$share/stats$n.txt"
if [ -f "$last" ]; then
  bb=$(awk '$1=="blocks_built"{print $2}' "$last"); de=$(awk '$1=="dispatcher_exits"{print $2}' "$last")
  [ "${bb:-0}" -gt 0 ] || bad "blocks_built = ${bb:-?}"
  [ "${de:-0}" -gt 0 ] || bad "dispatcher_exits = ${de:-?}"
else
  bad "no stats"
fi
if [ "$ALL" = 1 ]; then
  a="$share/stats-all.txt"
  e=$(awk '$1=="entries"{print $2}' "$a" 2>/dev/null)
  [ "${e:-0}" -gt 1000 ] || bad "all system calls: entries = ${e:-?}"
  grep -q 'blocks executed [1-9]' "$share/report-all.txt" 2>/dev/null || bad "all system calls: bbcount counted no block"
  echo "smoke: all system calls: $(tail -n1 "$share/attach-all.txt" 2>/dev/null); $(grep '^completion ' "$a" 2>/dev/null)"
fi
verdict_kernel_log "$share"
verdict_taint "$share"
[ ! -f "$last" ] || echo "smoke: $(tr '\n' ' ' < "$last")"
verdict_end; exit $?
