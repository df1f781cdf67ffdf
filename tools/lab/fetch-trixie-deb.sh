#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch one Debian 13 (trixie) package without installing it, for kernels
# whose ABI ends in +deb13-FLAVOUR.  The host is Debian 12: its apt index has
# no trixie, and adding trixie to the host's sources would offer trixie's
# packages as upgrades of the host's own.  So this script keeps a private
# index (its own sources list, lists and cache) in $KJIT_BUILD/trixie-apt and
# passes it to apt-get with -o options; the host's apt state is not touched.
# Usage: tools/lab/fetch-trixie-deb.sh PACKAGE OUTDIR
#          downloads PACKAGE's candidate into OUTDIR (cached: an existing
#          OUTDIR/PACKAGE_*.deb is kept) and prints the .deb's path
#        tools/lab/fetch-trixie-deb.sh --newest-abi [FLAVOUR]
#          prints the ABI trixie's linux-image-FLAVOUR metapackage points at
#          (FLAVOUR: cloud-amd64 (default), amd64, rt-amd64), e.g.
#          6.12.118+deb13-cloud-amd64
# Env: KJIT_BUILD (default REPO/build/lab), KJIT_TRIXIE_MIRROR (default
#   http://deb.debian.org/debian), KJIT_TRIXIE_SECURITY (default
#   http://deb.debian.org/debian-security).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
BUILD="${KJIT_BUILD:-$root/build/lab}"
MIRROR="${KJIT_TRIXIE_MIRROR:-http://deb.debian.org/debian}"
SECURITY="${KJIT_TRIXIE_SECURITY:-http://deb.debian.org/debian-security}"
# Debian 12's debian-archive-keyring already holds trixie's archive and
# release keys, so the index is verified with the host's own keyring.
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

usage() { echo "usage: $0 PACKAGE OUTDIR | $0 --newest-abi [FLAVOUR]" >&2; exit 2; }
[ $# -ge 1 ] || usage

idx="$BUILD/trixie-apt"
mkdir -p "$idx/lists/partial" "$idx/cache/archives/partial" "$idx/preferences.d"
idx="$(cd "$idx" && pwd)"
# Security updates carry the newest kernels (a point release follows later).
cat > "$idx/sources.list" <<EOF
deb [signed-by=$KEYRING] $MIRROR trixie main
deb [signed-by=$KEYRING] $MIRROR trixie-updates main
deb [signed-by=$KEYRING] $SECURITY trixie-security main
EOF
# Everything apt would read from /etc/apt or /var/lib/apt points into the
# private index; an empty dpkg status makes the candidates depend on trixie's
# index alone, not on what the host has installed or pinned.
apt_opts=(
  -o "Dir::Etc::sourcelist=$idx/sources.list" -o Dir::Etc::sourceparts=-
  -o "Dir::Etc::preferences=$idx/preferences" -o "Dir::Etc::preferencesparts=$idx/preferences.d"
  -o "Dir::State::Lists=$idx/lists" -o "Dir::Cache=$idx/cache"
  -o Dir::State::status=/dev/null -o Acquire::Languages=none
)

# One apt at a time on the private index (apt's own lock would fail the
# second caller instead of waiting).
exec 9>"$idx/lock"
flock 9

update() { apt-get "${apt_opts[@]}" update </dev/null >&2; }

if [ "$1" = --newest-abi ]; then
  [ $# -le 2 ] || usage
  flavour="${2:-cloud-amd64}"
  update
  # The flavour's metapackage depends on the current image, the one a
  # trixie machine gets when it upgrades.
  abi="$(apt-cache "${apt_opts[@]}" depends "linux-image-$flavour" </dev/null \
           | sed -n "s/^ *Depends: linux-image-\(.*+deb13-$flavour\)\$/\1/p" | head -n1)"
  [ -n "$abi" ] || { echo "fetch-trixie-deb: no linux-image-$flavour in trixie's index" >&2; exit 1; }
  echo "$abi"
  exit 0
fi

[ $# -eq 2 ] || usage
pkg="$1"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
deb="$(find "$out" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)"
if [ -z "$deb" ]; then
  # apt-get download runs as _apt when root: give it a writable directory.
  tmp="$(mktemp -d)"; chmod 777 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  # An index that has never been fetched, or has gone stale (a package it
  # names is gone from the mirror), is refreshed once.
  (cd "$tmp" && apt-get "${apt_opts[@]}" download "$pkg" </dev/null) >&2 || {
    update && (cd "$tmp" && apt-get "${apt_opts[@]}" download "$pkg" </dev/null) >&2; }
  mv "$tmp/${pkg}"_*.deb "$out/"
  deb="$(find "$out" -maxdepth 1 -name "${pkg}_*.deb" | head -n1)"
fi
[ -n "$deb" ] || { echo "fetch-trixie-deb: $pkg not downloaded" >&2; exit 1; }
echo "$deb"
