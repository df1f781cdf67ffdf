# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the host scripts under tests/guest/: builds the directory that
# tools/lab/run-guest.sh packs into the guest's disk.  Guest scripts are
# plain files; their parameters come from a preamble of NAME='value' lines,
# so nothing in them is expanded on the host.
#
#   share_guest_bin BUILD_DIR           builds the guest programs (CMake
#                                       target kjit_guest_programs: kjitctl and
#                                       the workloads) and uses BUILD_DIR/guest-bin
#   share_new DIR                       an empty DIR
#   share_kjit DIR KJIT_KO REPO_ROOT    kjit.ko, the static kjitctl and the
#                                       guest helpers (guest-lib.sh, the
#                                       kernel-log check)
#   share_program DIR NAME              a static guest program (tests/guest/CMakeLists.txt)
#   share_stress_ng DIR                 the host's stress-ng with its libraries
#                                       (run in the guest as ./lib/ld-linux-x86-64.so.2
#                                       --library-path ./lib ./stress-ng)
#   share_script DIR GUEST_SCRIPT [NAME=VALUE...]
#                                       DIR/run.sh: the preamble, then GUEST_SCRIPT

# The guest programs are the same for every kernel: a run whose BUILD_DIR
# is another kernel's (tests/guest/kernel-lines.sh) takes them from
# KJIT_HOST_BUILD, the cmake tree.
share_guest_bin() {
  local host="${KJIT_HOST_BUILD:-$1}"
  cmake --build "$host" --target kjit_guest_programs >/dev/null || return 1
  KJIT_GUEST_BIN="$host/guest-bin"
}

share_new() {
  rm -rf "$1"
  mkdir -p "$1"
}

share_kjit() {
  local share="$1" ko="$2" root="$3"
  cp "$ko" "$share/"
  share_program "$share" kjitctl
  cp "$root/tests/guest/guest-lib.sh" "$root/tools/lab/kernel-log-errors.sh" "$share/"
}

share_program() {
  local share="$1" name="$2"
  [ -n "${KJIT_GUEST_BIN:-}" ] || { echo "share_program: call share_guest_bin BUILD_DIR first" >&2; return 2; }
  cp "$KJIT_GUEST_BIN/$name" "$share/$name"
}

share_stress_ng() {
  local share="$1" sng l
  sng="$(command -v stress-ng)" || { echo "stress-ng missing (tools/lab/deps.sh installs it)" >&2; return 2; }
  mkdir -p "$share/lib"
  cp "$sng" "$share/stress-ng"
  for l in $(ldd "$sng" | awk '/=>/{print $3} /ld-linux/{print $1}'); do cp -L "$l" "$share/lib/"; done
}

# Values are single-quoted for the guest's sh, so they reach it verbatim.
share_script() {
  local share="$1" script="$2" kv name value
  shift 2
  {
    echo '#!/bin/sh'
    echo "# $(basename "$script") with its parameters (written by the host)"
    for kv in "$@"; do
      name="${kv%%=*}"
      value="${kv#*=}"
      printf "%s='%s'\n" "$name" "$(printf '%s' "$value" | sed "s/'/'\\\\''/g")"
      echo "export $name"
    done
    sed '1{/^#!/d}' "$script"
  } > "$share/run.sh"
  chmod +x "$share/run.sh"
}
