#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest test suite that `./kjit-lab test` runs.
# Usage: tests/guest/run-suite.sh BUILD_DIR
#   Builds kjitctl, the workload, the plugin modules and the test modules
#   (tests/guest/hazard: hazards, a livepatch, a second direct-call user)
#   (kjit.ko must exist: os/linux/build.sh BUILD_DIR), then boots the kernel
#   (tools/lab/abi.sh) under TCG with 2 vCPUs running
#   tests/guest/suite-guest.sh: twice where it chooses its preemption at
#   boot (voluntary, the default, and preempt=full), once on
#   PREEMPT_RT.  The verdict of each boot is tests/guest/verdict.sh's.
# Env: KJIT_SUITE_MODES ("voluntary full", or "rt" on a PREEMPT_RT kernel;
#   tools/lab/preempt-modes.sh),
#   KJIT_SUITE_PHASES (the phases to run, by name: tests/guest/suite/NAME.sh,
#   e.g. "hazards tools"; default all, in suite-guest.sh's order),
#   KJIT_SUITE_QUICK=1 (skip the start/stop x100 and insmod/rmmod x20
#   phases), KJIT_SUITE_ITERS (1),
#   KJIT_SUITE_TIMEOUT (seconds per boot: 900 with two boots, 1500 with
#   one, within the test's 1800; a hang is dumped 45 s before it,
#   tools/lab/run-guest.sh), KJIT_SUITE_APPEND (extra kernel args for every boot, e.g. loglevel=7 to
#   see kernel messages on the console despite `quiet`), KJIT_SUITE_MTTCG=1
#   (multi-threaded TCG; the default is single-threaded: the start/stop
#   phase patches kernel text while both vCPUs run, and QEMU 7.2's
#   multi-threaded TCG can keep executing a stale int3 from such a patch,
#   see tools/lab/run-guest.sh --tcg-single), KJIT_SUITE_SHARE_PREFIX (the
#   share is BUILD_DIR/guest-suite-PREFIXMODE: runs beside guest.suite's).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
KDIR="${KDIR:-/usr/src/linux-headers-$ABI}"
# The kernel's preemption modes (tools/lab/preempt-modes.sh): both where it
# chooses at boot (PREEMPT_DYNAMIC: cloud, generic); PREEMPT_RT has its own
# model only, one boot ("rt"); "lazy" too where the kernel has it.
MODES="${KJIT_SUITE_MODES:-$("$root/tools/lab/preempt-modes.sh")}"
# One boot may take the time of two: a kernel with one preemption model
# (rt) runs every phase in it, and on single-threaded TCG its vCPUs spin
# in native_queued_spin_lock_slowpath for holders TCG has not yet run, so
# that boot alone comes near 900 s.
read -r -a mode_list <<< "$MODES"
boot_timeout="${KJIT_SUITE_TIMEOUT:-$([ "${#mode_list[@]}" -gt 1 ] && echo 900 || echo 1500)}"
PHASES="${KJIT_SUITE_PHASES:-all}"
for p in $PHASES; do
  [ "$p" = all ] || [ -f "$root/tests/guest/suite/$p.sh" ] || {
    echo "run-suite: no phase $p; the phases: $(for f in "$root"/tests/guest/suite/*.sh; do basename "$f" .sh; done | tr '\n' ' ')" >&2; exit 2; }
done
host_kjit run-suite

# A run with a share prefix builds its modules apart: it may run beside
# guest.suite on the same BUILD_DIR (tests/guest/cpu-models.sh).
pfx="${KJIT_SUITE_SHARE_PREFIX:-}"
plugins="$B/${pfx}plugins-linux"
KJIT_PLUGINS_OUT="$plugins" "$root/plugins/linux/build.sh" "$B" > "$plugins.log" 2>&1 || { cat "$plugins.log" >&2; exit 1; }
hz="$B/${pfx}hazard"; mkdir -p "$hz"
cp "$root"/tests/guest/hazard/{kjit_hazard.c,kjit_livepatch.c,kjit_direct_peer.c,Kbuild} "$root/os/linux/compat.h" "$hz/"
"$root/tools/lab/kbuild.sh" "$B" -- "$root/os/linux/conftest.sh" "$KDIR" "$hz/kjit_compat_generated.h"
"$root/tools/lab/kbuild.sh" "$B" -- make -C "$KDIR" M="$hz" -j2 modules > "$hz/build.log" 2>&1 || { cat "$hz/build.log" >&2; exit 1; }

# Where schedule() goes on after __schedule returns, as kjitctl names that
# block ("schedule+0x5a"): the guest checks that blocking calls count it.
sched_ret() {
  local syms="$root/tests/data/kallsyms-$ABI.txt.xz" vmlinux="$KJIT_BUILD/kernel/vmlinux" s f c
  s=$(xzcat "$syms" | awk '$3=="schedule"{print $1; exit}')
  f=$(xzcat "$syms" | awk '$3=="__schedule"{print $1; exit}')
  [ -n "$s" ] && [ -n "$f" ] && [ -f "$vmlinux" ] || return 1
  c=$(objdump -d --no-show-raw-insn --start-address="0x$s" --stop-address="$(printf '0x%x' $((0x$s + 0x200)))" "$vmlinux" |
      awk -v f="0x$f" '$2 == "call" && $3 == f {sub(":", "", $1); print $1; exit}')
  [ -n "$c" ] || return 1
  printf 'schedule+0x%x\n' $((0x$c + 5 - 0x$s))
}
SCHED_RET=$(sched_ret) || { echo "run-suite: cannot find schedule's call to __schedule in vmlinux" >&2; exit 1; }
# Whether the kernel has the bug kjit names at load (os/linux/kernel_quirks.c),
# read from its vmlinux.
RCU_REINIT=$("$root/tools/lab/rcu-reinit.sh") || exit 1

tcg=(--tcg-single)
[ "${KJIT_SUITE_MTTCG:-0}" != 1 ] || tcg=()

# The phases a boot ran, from the PHASE lines suite-guest.sh writes, and
# the ones it had to: those asked for (all: every section of the check
# list), but the two long stress phases where KJIT_SUITE_QUICK skips them.
checks_list="$root/tests/guest/suite/checks.list"
ran_phases() { awk '$1 == "PHASE" && $2 != "base" {printf "%s ", $2}' "$1/checks.txt" 2>/dev/null; }
want_phases() {
  local p="$PHASES" x
  [ "$p" != all ] || p="$(sed -n 's/^\[\(.*\)\]$/\1/p' "$checks_list" | grep -vx base)"
  for x in $p; do
    case "${KJIT_SUITE_QUICK:-0}:$x" in 1:start_stop|1:load_unload) ;; *) printf '%s ' "$x" ;; esac
  done
}

verdict_begin run-suite
for mode in $MODES; do
  share="$B/guest-suite-$pfx$mode"
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  cp "$plugins"/*.ko "$hz"/kjit_{hazard,livepatch,direct_peer}.ko "$share/"
  share_program "$share" workload
  share_program "$share" uffd_fault
  share_program "$share" blocking
  mkdir -p "$share/suite"
  cp "$root"/tests/guest/suite/*.sh "$share/suite/"
  share_script "$share" "$root/tests/guest/suite-guest.sh" PHASES="$PHASES" \
    QUICK="${KJIT_SUITE_QUICK:-0}" ITERS="${KJIT_SUITE_ITERS:-1}" SCHED_RET="$SCHED_RET" RCU_REINIT="$RCU_REINIT"
  append="${KJIT_SUITE_APPEND:-}"
  mode_arg="$("$root/tools/lab/preempt-modes.sh" --append "$mode")"
  [ -z "$mode_arg" ] || append="$append $mode_arg"
  echo "run-suite: booting ($mode preemption)"
  rc=0
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --mem 1024 \
     --timeout "$boot_timeout" ${tcg[@]+"${tcg[@]}"} ${append:+--append "$append"} || rc=$?
  # the log up to the deliberate WARN, the last phase (the guest's
  # log_snapshot was taken before it)
  VERDICT_LOG_UNTIL='== WARN at the original address' verdict_boot "$share" "$rc" SUITE-GUEST-DONE "$mode"
  # every check of the phases asked for, from their sections of the list,
  # and exactly those phases run
  want="$(want_phases)"
  if [ "$(tr ' ' '\n' <<<"$want" | sort | xargs)" != "$(ran_phases "$share" | tr ' ' '\n' | sort | xargs)" ]; then
    verdict_bad "$mode: phases run: $(ran_phases "$share"), asked for: $want"
  fi
  verdict_expect_checks "$share" "$checks_list" "$mode" "$want"
  if [ -f "$share/cost.txt" ]; then echo "run-suite: $mode: entry/exit cost: $(cat "$share/cost.txt")"; fi
  for t in icount bbcount; do
    if [ -f "$share/stats-$t.txt" ]; then
      echo "run-suite: $mode: $t all-syscalls: $(awk '$1~/^(blocks_built|cache_bytes_used|entries|flushes|extable_mirrored|extable_declined)$/{printf "%s=%s ", $1, $2}' "$share/stats-$t.txt")"
    fi
  done
  if [ -f "$share/attach-icount.txt" ]; then echo "run-suite: $mode: $(tail -n1 "$share/attach-icount.txt")"; fi
  if [ -f "$share/stats-icount.txt" ]; then
    echo "run-suite: $mode: all-syscalls workload (icount): $(grep '^completion' "$share/stats-icount.txt")"
    echo "run-suite: $mode: where they left: $(sed -n '2,9p' "$share/departures-icount.txt" 2>/dev/null | awk '{printf "%s %s %s; ", $1, $2, $3}')"
  fi
done
verdict_end; exit $?
