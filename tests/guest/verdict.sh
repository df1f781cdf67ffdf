# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the host scripts under tests/guest/: the one verdict every guest
# test gives on a finished boot.  A boot passes when tools/lab/run-guest.sh
# returned 0, the guest printed its DONE marker (it reached its end), its
# checks.txt exists with no FAIL line, the kernel log (console and the
# guest's dmesg.txt) has no error line and the taint is only what loading
# kjit.ko and the tests' own modules explains.
#
#   verdict_begin NAME            starts a verdict (messages say "NAME: ...")
#   verdict_bad MESSAGE           records a failure
#   verdict_boot SHARE RC MARKER [LABEL]
#                                 run-guest status, DONE marker, checks,
#                                 kernel log, taint of one boot
#   verdict_end                   prints NAME: PASS or NAME: FAIL; its status
#                                 is the verdict (use: verdict_end; exit $?)
# The pieces of verdict_boot, for a boot that must be judged differently:
#   verdict_status SHARE RC [LABEL]    verdict_done SHARE MARKER [LABEL]
#   verdict_checks SHARE [LABEL]       verdict_kernel_log SHARE [LABEL]
#   verdict_taint SHARE [LABEL]
# The check names against a list in the tree (tests/guest/checks/):
#   verdict_expect_checks SHARE LIST [LABEL [PHASES]]
#   verdict_list_expand LIST KEY=VALUES...   (a list named by parameters)
# Env read by verdict_checks: VERDICT_LIST_CHECKS=1 prints every check line.

# Taint bits a test boot may carry: O (4096, out-of-tree module: kjit.ko),
# E (8192, unsigned module: kjit.ko) and K (32768, live patched: the tests'
# livepatch module).  Anything else (W: a warning, D: an oops, L: a soft
# lockup...) fails the boot.  README.md "Requirements and safety" says the same.
VERDICT_TAINT_OK=$((4096 | 8192 | 32768))

verdict_begin() {
  VERDICT_NAME="$1"
  VERDICT_FAIL=0
}

verdict_bad() {
  echo "$VERDICT_NAME: FAIL: $*" >&2
  VERDICT_FAIL=1
}

# " (LABEL)" when a label is given: which boot of several a message is about
_verdict_label() { [ -z "${1:-}" ] || printf ' (%s)' "$1"; }

verdict_status() {
  local share="$1" rc="$2" label; label="$(_verdict_label "${3:-}")"
  [ "$rc" = 0 ] && return 0
  verdict_bad "guest status $rc$label; the console's last lines:"
  tail -n 40 "$share/console.log" >&2 || true
}

verdict_done() {
  local share="$1" marker="$2" label; label="$(_verdict_label "${3:-}")"
  grep -q "$marker" "$share/guest.log" 2>/dev/null || verdict_bad "guest did not finish$label"
}

verdict_checks() {
  local share="$1" label="${2:-}" np nf prefix
  prefix="$VERDICT_NAME:${label:+ $label:}"
  if [ ! -f "$share/checks.txt" ]; then
    verdict_bad "no checks.txt$(_verdict_label "$label")"; return
  fi
  [ "${VERDICT_LIST_CHECKS:-0}" != 1 ] || sed "s/^/$prefix /" "$share/checks.txt"
  np=$(grep -c ' PASS' "$share/checks.txt" || true)
  nf=$(grep -c ' FAIL' "$share/checks.txt" || true)
  echo "$prefix $np checks passed, $nf failed"
  [ "$np" -gt 0 ] || verdict_bad "no check passed$(_verdict_label "$label")"
  if grep ' FAIL' "$share/checks.txt" >&2; then VERDICT_FAIL=1; fi
}

# The guest's check names (CHECK lines of checks.txt) must be exactly the
# ones LIST names (one per line, # comments), each once: a guest that
# skipped or lost a check, or grew one the tree does not list, fails here
# rather than passing on whatever it chose to run.  A list may be cut into
# sections, one per phase ("[NAME]" lines; checks before the first section
# and in "[base]" are every run's): with PHASES (space-separated; default
# all), only the base and those phases' sections are expected, so a run of
# some phases is held to exactly their checks.
# verdict_list_names LIST [PHASES]: the names verdict_expect_checks wants
verdict_list_names() {
  sed 's/#.*//; /^[[:space:]]*$/d' "$1" |
    awk -v phases=" ${2:-all} " '/^\[.*\]$/ {sec = substr($0, 2, length($0) - 2); next}
         sec == "" || sec == "base" || phases == " all " || index(phases, " " sec " ") {print $1}' | sort
}
verdict_expect_checks() {
  local share="$1" list="$2" label got want missing extra phases="${4:-all}"
  label="$(_verdict_label "${3:-}")"
  [ -f "$share/checks.txt" ] || return 0      # verdict_checks says so
  got=$(awk '$1 == "CHECK" {print $2}' "$share/checks.txt" | sort)
  want=$(verdict_list_names "$list" "$phases")
  missing=$(comm -13 <(echo "$got" | sort -u) <(echo "$want") | tr '\n' ' ')
  extra=$(comm -23 <(echo "$got" | sort -u) <(echo "$want") | tr '\n' ' ')
  [ -z "$missing" ] || verdict_bad "checks missing$label (${list#"$VERDICT_ROOT"/}): $missing"
  [ -z "$extra" ] || verdict_bad "checks not in ${list#"$VERDICT_ROOT"/}$label: $extra"
  [ "$(echo "$got" | uniq -d | wc -w)" = 0 ] || verdict_bad "checks run twice$label: $(echo "$got" | uniq -d | tr '\n' ' ')"
  echo "$VERDICT_NAME:${3:+ $3:} $(echo "$got" | wc -w) checks, the $(echo "$want" | wc -w) of ${list#"$VERDICT_ROOT"/}${4:+ for phases $phases}"
}

# verdict_list_expand LIST KEY=VALUES...: LIST (comments dropped) with
# each line that holds {KEY} written once per word of VALUES, for a guest
# that names its checks after its parameters (tests/guest/checks/
# neighbours.list); the output is a list for verdict_expect_checks.  A
# {KEY} left unexpanded fails: no check can carry that name.
verdict_list_expand() {
  local list="$1" kv key v l lines
  shift
  lines="$(sed 's/#.*//; /^[[:space:]]*$/d' "$list")"
  for kv in "$@"; do
    key="{${kv%%=*}}"
    lines="$(while IFS= read -r l; do
               if [[ "$l" == *"$key"* ]]; then for v in ${kv#*=}; do echo "${l//"$key"/$v}"; done
               else echo "$l"; fi
             done <<< "$lines")"
  done
  if grep -n '{' <<< "$lines" >&2; then verdict_bad "$list: placeholders left unexpanded (above)"; fi
  echo "$lines"
}

# The console, up to a line the test marks as the start of deliberate
# errors (VERDICT_LOG_UNTIL, a sed address regex), and the guest's dmesg.txt
# if it wrote one (it stops there too: the guest writes it before).
_verdict_console() {
  if [ -n "${VERDICT_LOG_UNTIL:-}" ]; then sed "/$VERDICT_LOG_UNTIL/,\$d" "$1"; else cat "$1"; fi
}
verdict_kernel_log() {
  local share="$1" label logs=()
  label="$(_verdict_label "${2:-}")"
  [ ! -f "$share/dmesg.txt" ] || logs+=("$share/dmesg.txt")
  [ -r "$share/console.log" ] || { verdict_bad "no console.log$label"; return; }
  if _verdict_console "$share/console.log" |
       "$VERDICT_ROOT/tools/lab/kernel-log-errors.sh" - ${logs[@]+"${logs[@]}"} >&2; then
    verdict_bad "kernel log has error lines$label"
  fi
}

verdict_taint() {
  local share="$1" label t
  label="$(_verdict_label "${2:-}")"
  t=$(tr -d '[:space:]' < "$share/tainted.txt" 2>/dev/null || true)
  if [ -z "$t" ]; then verdict_bad "the guest wrote no tainted.txt$label"; return; fi
  [ $((t & ~VERDICT_TAINT_OK)) -eq 0 ] ||
    verdict_bad "kernel tainted $t, beyond O, E and K (bits $((t & ~VERDICT_TAINT_OK)))$label"
}

verdict_boot() {
  local share="$1" rc="$2" marker="$3" label="${4:-}"
  verdict_status "$share" "$rc" "$label"
  verdict_done "$share" "$marker" "$label"
  verdict_checks "$share" "$label"
  verdict_kernel_log "$share" "$label"
  verdict_taint "$share" "$label"
}

verdict_end() {
  if [ "$VERDICT_FAIL" = 0 ]; then echo "$VERDICT_NAME: PASS"; else echo "$VERDICT_NAME: FAIL"; fi
  return "$VERDICT_FAIL"
}

VERDICT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
