#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Neighbours that come and go: other tools hooking functions that kjit
# translates (a trace instance's function tracer, function_graph, kprobes,
# kretprobes, a livepatch, BPF fentry/fexit) are started and stopped while
# kjit is attached to openat, read and close, before and after kjit
# translated the path; each must count exactly as natively, and calls made
# through kjit after the tool went away must run with a clean kernel log
# (tests/guest/neighbours-guest.sh).
# Usage: tests/guest/neighbours.sh BUILD_DIR
#   Boots the kernel (tools/lab/abi.sh) with 2 vCPUs under single-threaded
#   TCG (text is patched while both vCPUs run, see tools/lab/run-guest.sh
#   --tcg-single), twice where it chooses its preemption at boot
#   (voluntary, its default, and preempt=full), once on PREEMPT_RT.
# Env: KJIT_NEIGHBOURS_MODES ("voluntary full", or "rt": tools/lab/preempt-modes.sh),
#   KJIT_NEIGHBOURS_TOOLS ("ftrace graph kprobe kretprobe sched livepatch bpf switching"),
#   KJIT_NEIGHBOURS_ORDERS ("before after": the tool on before kjit translates,
#   after it did), KJIT_NEIGHBOURS_N (50 calls per count), KJIT_NEIGHBOURS_ROUNDS (2),
#   KJIT_NEIGHBOURS_KO (the module to test; default BUILD_DIR/module/kjit.ko).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
KDIR="${KDIR:-/usr/src/linux-headers-$ABI}"
MODES="${KJIT_NEIGHBOURS_MODES:-$("$root/tools/lab/preempt-modes.sh")}"
host_kjit neighbours "${KJIT_NEIGHBOURS_KO:-}"

# the suite's livepatch module and the kretprobe on __schedule, built alone
lp="$B/neighbours-modules"; mkdir -p "$lp"
cp "$root"/tests/guest/hazard/{kjit_livepatch.c,kjit_schedkret.c} "$lp/"
echo 'obj-m := kjit_livepatch.o kjit_schedkret.o' > "$lp/Kbuild"
make -C "$KDIR" M="$lp" -j2 modules > "$lp/build.log" 2>&1 || { cat "$lp/build.log" >&2; exit 1; }

# The guest's parameters, which also name its checks (checks/neighbours.list)
TOOLS="${KJIT_NEIGHBOURS_TOOLS:-ftrace graph kprobe kretprobe sched livepatch bpf switching}"
ORDERS="${KJIT_NEIGHBOURS_ORDERS:-before after}"
ROUNDS="${KJIT_NEIGHBOURS_ROUNDS:-2}"

verdict_begin neighbours
for mode in $MODES; do
  share="$B/guest-neighbours-$mode"
  share_new "$share"
  share_kjit "$share" "$ko" "$root"
  cp "$lp"/kjit_{livepatch,schedkret}.ko "$share/"
  share_program "$share" neighbour_calls
  share_program "$share" bpf_count
  share_script "$share" "$root/tests/guest/neighbours-guest.sh" \
    N="${KJIT_NEIGHBOURS_N:-50}" NLP=10 ROUNDS="$ROUNDS" ORDERS="$ORDERS" TOOLS="$TOOLS"
  append="$("$root/tools/lab/preempt-modes.sh" --append "$mode")"
  echo "neighbours: booting ($mode preemption)"
  start=$SECONDS rc=0
  "$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --mem 1024 \
     --timeout 900 --tcg-single ${append:+--append "$append"} || rc=$?
  echo "neighbours: $mode: guest ran $((SECONDS - start)) s"
  verdict_boot "$share" "$rc" NEIGHBOURS-GUEST-DONE "$mode"
  verdict_list_expand "$root/tests/guest/checks/neighbours.list" tool="$TOOLS" order="$ORDERS" \
    round="$(seq -s ' ' 1 "$ROUNDS")" > "$share/checks-expected.list"
  verdict_expect_checks "$share" "$share/checks-expected.list" "$mode"
  grep -q '^CHECK final_rmmod PASS' "$share/checks.txt" 2>/dev/null ||
    verdict_bad "the guest did not reach its final rmmod ($mode)"
  if [ -s "$share/notes.txt" ]; then sed "s/^/neighbours: $mode: /" "$share/notes.txt"; fi
done
verdict_end; exit $?
