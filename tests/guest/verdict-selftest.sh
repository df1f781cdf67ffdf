#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# verdict.sh judged on made-up boots (no guest): each way a boot can fail
# must fail the verdict, and a clean boot must pass it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=tests/guest/verdict.sh
. "$root/tests/guest/verdict.sh"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
bad=0

# A boot that did everything right; CASE then spoils one thing.
boot() {
  local s="$t/$1"
  rm -rf "$s"; mkdir -p "$s"
  echo "CHECK one PASS" > "$s/checks.txt"
  printf 'kjit-init: running run.sh\nkjit: loaded\n' > "$s/console.log"
  echo "TEST-DONE" > "$s/guest.log"
  echo 4096 > "$s/tainted.txt"
  echo "$s"
}

# judged_by JUDGE pass|fail NAME SETUP...: JUDGE (a function of the share)
# on a boot changed by SETUP must give the verdict wanted.
judged_by() {
  local judge="$1" want="$2" name="$3" s got
  shift 3
  s="$(boot "$name")"
  (cd "$s" && eval "$*") || true
  if (verdict_begin "$name"; "$judge" "$s"; verdict_end) >/dev/null 2>&1
  then got=pass; else got=fail; fi
  if [ "$got" = "$want" ]; then echo "CHECK $name PASS"; else echo "CHECK $name FAIL: verdict $got, expected $want"; bad=1; fi
}
# expect pass|fail NAME SETUP...: the whole boot's verdict (UNTIL: the mark).
# shellcheck disable=SC2317  # called through judged_by
boot_verdict() { VERDICT_LOG_UNTIL="${UNTIL:-}" verdict_boot "$1" 0 TEST-DONE; }
expect() { judged_by boot_verdict "$@"; }

expect pass clean true
expect fail console_bug "echo 'BUG: kernel NULL pointer dereference, address: 0000000000000000' >> console.log"
expect fail console_warn "echo 'WARNING: CPU: 1 PID: 7 at mm/slub.c:1 f+0x1/0x2' >> console.log"
expect fail console_oops "echo 'Oops: 0002 [#1] PREEMPT SMP NOPTI' >> console.log"
expect fail console_missing "rm console.log"
expect fail dmesg_bug "echo 'BUG: soft lockup - CPU#0 stuck for 22s!' > dmesg.txt"
expect fail dmesg_warn_only "echo 'WARNING: CPU: 0 PID: 93 at kernel/sched/core.c:1 f+0x1/0x2' > dmesg.txt"
expect fail console_orc_direction "echo 'WARNING: stack going in the wrong direction? at do_syscall_64+0x5d/0x90' >> console.log"
expect fail dmesg_orc_registers "echo \"WARNING: can't access registers at entry_SYSCALL_64_after_hwframe+0x6e/0xd8\" > dmesg.txt"
expect fail console_frame_pointer "echo 'WARNING: kernel stack frame pointer at 00000000a1b2c3d4 in cat:93 has bad value 0000000000000000' >> console.log"
# A boot's status: 124 it timed out, 125 it wrote no done file.
# shellcheck disable=SC2317  # called through judged_by
timed_out() { verdict_boot "$1" 124 TEST-DONE; }
# shellcheck disable=SC2317
no_done() { verdict_boot "$1" 125 TEST-DONE; }
judged_by timed_out fail boot_timed_out true
judged_by no_done fail boot_no_done true
expect fail check_failed "echo 'CHECK two FAIL' >> checks.txt"
expect fail no_checks "rm checks.txt"
expect fail not_done "rm guest.log"
expect fail tainted_warn "echo 4608 > tainted.txt"
expect fail no_taint_file "rm tainted.txt"
# Errors after the marked start of deliberate errors are the test's own.
UNTIL='== deliberate' expect pass deliberate_after_mark "printf '== deliberate\\nBUG: on purpose\\n' >> console.log"
UNTIL='== deliberate' expect fail error_before_mark "printf 'BUG: early\\n== deliberate\\n' >> console.log"
# The check names against a list in the tree.
list="$(mktemp)"; trap 'rm -f "$list"' EXIT
printf '# the list\none\n' > "$list"
# shellcheck disable=SC2317  # called through judged_by
list_verdict() { verdict_expect_checks "$1" "$list"; }
expect_list() { judged_by list_verdict "$@"; }
expect_list pass list_exact true
expect_list fail list_check_missing "echo 'CHECK x PASS' > checks.txt"
expect_list fail list_check_unlisted "echo 'CHECK two PASS' >> checks.txt"
expect_list fail list_check_twice "echo 'CHECK one PASS' >> checks.txt"
# A list in sections, and a run of some phases: the base and exactly those
# phases' checks.
sections="$(mktemp)"; trap 'rm -f "$list" "$sections"' EXIT
printf '# the list\none\n[a]\ntwo\n[base]\nthree\n' > "$sections"
# shellcheck disable=SC2317  # called through judged_by
phases_a() { verdict_expect_checks "$1" "$sections" "" a; }
# shellcheck disable=SC2317
phases_b() { verdict_expect_checks "$1" "$sections" "" b; }
judged_by phases_a fail phase_check_missing "echo 'CHECK three PASS' >> checks.txt"
judged_by phases_a pass phase_checks_exact "printf 'CHECK two PASS\nCHECK three PASS\n' >> checks.txt"
judged_by phases_a fail base_check_missing "echo 'CHECK two PASS' >> checks.txt"
judged_by phases_b pass other_phase_not_expected "echo 'CHECK three PASS' >> checks.txt"
judged_by phases_b fail other_phase_check_unlisted "printf 'CHECK two PASS\nCHECK three PASS\n' >> checks.txt"

# The guest tests' own lists (tests/guest/checks/): a boot that reports
# every check of its list passes; one that lost a check, or a phase,
# fails.  LIST and PHASES name the list for judge_list.
# shellcheck disable=SC2317  # called through judged_by
judge_list() { verdict_expect_checks "$1" "$LIST" "" "${PHASES:-}"; }
# reported [PHASES] [DROP]: checks.txt with the list's names (those
# phases'), but those matching the regular expression DROP
# shellcheck disable=SC2317  # called through judged_by
reported() { verdict_list_names "$LIST" "${1:-all}" | grep -Ev "${2:-^$}" | sed 's/^/CHECK /; s/$/ PASS/' > checks.txt; }
for LIST in "$root"/tests/guest/checks/*.list; do
  n="$(basename "$LIST" .list)"
  [ "$n" != neighbours ] || continue   # a template: below
  PHASES="" judged_by judge_list pass "list_${n}_all" reported
  PHASES="" judged_by judge_list fail "list_${n}_one_lost" \
    "reported all '^$(verdict_list_names "$LIST" | tail -n1)\$'"
done
# debian_packages: each boot is held to its section and the base; an
# install boot judged as the use boot lacks that phase's checks, and a
# use boot that skipped the purge lacks those.
LIST="$root/tests/guest/checks/debian_packages.list"
PHASES=install judged_by judge_list pass debian_install_boot "reported install"
PHASES=use judged_by judge_list fail debian_use_phase_skipped "reported install"
PHASES=use judged_by judge_list fail debian_purge_skipped "reported use '^(purge_|readme_block_readme-remove)'"
PHASES=install judged_by judge_list fail debian_base_lost "reported install '^kaslr_'"
# neighbours: the list is written out from the guest's parameters.
tmpl="$root/tests/guest/checks/neighbours.list"
nb="$t/neighbours-expected.list"
# shellcheck disable=SC2317  # called through judged_by
judge_nb() { verdict_expect_checks "$1" "$nb"; }
verdict_list_expand "$tmpl" tool="ftrace bpf" order="before after" round="1 2" > "$nb"
LIST="$nb" judged_by judge_nb pass neighbours_all "LIST='$nb' reported"
LIST="$nb" judged_by judge_nb fail neighbours_round_lost "LIST='$nb' reported all '_2(_|\$)'"
LIST="$nb" judged_by judge_nb fail neighbours_tool_lost "LIST='$nb' reported all '^bpf_'"
LIST="$nb" judged_by judge_nb fail neighbours_gone_lost "LIST='$nb' reported all '^ftrace_after_1_gone\$'"
# a placeholder the host did not give a value fails the verdict
# shellcheck disable=SC2317  # called through judged_by
expand_short() { verdict_list_expand "$tmpl" tool=ftrace order=before > /dev/null 2>&1; }
judged_by expand_short fail neighbours_placeholder_left true
exit "$bad"
