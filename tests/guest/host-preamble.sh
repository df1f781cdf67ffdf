# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The start of every guest test's host script (tests/guest/NAME.sh
# [BUILD_DIR] ...), sourced first:
#   # shellcheck source=tests/guest/host-preamble.sh
#   . "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
# Strict mode (set -euo pipefail); root, the repository; B, BUILD_DIR (the
# script's $1, default root/build) made absolute; KJIT_BUILD, the lab's
# cache (default B/lab, as ./kjit-lab sets it), exported so that every lab
# script the test runs (run-guest.sh, preempt-modes.sh, fetch-debug.sh...)
# works on the same kernel; the share and verdict helpers (share.sh,
# verdict.sh).
#
#   host_kjit NAME [KO]   the module the test loads, in ko (KO, default
#                         B/module/kjit.ko; missing: status 2 with a message
#                         that starts with NAME), and the guest programs
#                         (share_guest_bin B)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "${1:-$root/build}" && pwd)"
export KJIT_BUILD="${KJIT_BUILD:-$B/lab}"
# shellcheck source=tests/guest/share.sh
. "$root/tests/guest/share.sh"
# shellcheck source=tests/guest/verdict.sh
. "$root/tests/guest/verdict.sh"

host_kjit() {
  ko="${2:-$B/module/kjit.ko}"
  [ -f "$ko" ] || { echo "$1: $ko missing (os/linux/build.sh $B)" >&2; exit 2; }
  share_guest_bin "$B"
}
