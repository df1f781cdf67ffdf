#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds the Debian packages kjit-dkms and kjit (debian/) from a clean copy
# of the tree (the files git knows, with their working-tree contents), with
# dpkg-buildpackage: ./kjit-lab package runs it.
# Usage: tools/package.sh [--if-stale] BUILD_DIR
#   -> BUILD_DIR/packages/kjit-dkms_V_amd64.deb, kjit_V_amd64.deb (and the
#   build log).  --if-stale keeps packages built from the tree as it is now
#   (same files, same contents: BUILD_DIR/packages/tree.sha256) and builds
#   otherwise: a test must never inspect packages of an older tree.
# Needs debhelper, dh-dkms and the Build-Depends of debian/control
# (tools/lab/deps.sh installs them); Zydis's source comes from Debian
# (tools/lab/fetch-zydis-source.sh, cached in KJIT_BUILD).  Env: JOBS.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
if_stale=0
[ "${1:-}" != --if-stale ] || { if_stale=1; shift; }
[ $# -eq 1 ] || { echo "usage: $0 [--if-stale] BUILD_DIR" >&2; exit 2; }
mkdir -p "$1"; B="$(cd "$1" && pwd)"
export KJIT_BUILD="${KJIT_BUILD:-$B/lab}"
out="$B/packages"
version="$(cd "$root" && dpkg-parsechangelog -S Version)"
src="$out/src/kjit-$version"
# What the packages are built from: every file git knows or would add, by
# name and content.
tree_sha() {
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 sha256sum -- | sha256sum | cut -d' ' -f1)
}
sha="$(tree_sha)"
if [ "$if_stale" = 1 ] && [ "$(cat "$out/tree.sha256" 2>/dev/null)" = "$sha" ] &&
   ls "$out"/kjit-dkms_"$version"_*.deb "$out"/kjit_"$version"_*.deb 2>/dev/null; then
  exit 0
fi
KJIT_ZYDIS_SRC="$("$root/tools/lab/fetch-zydis-source.sh" | tail -n1)"
export KJIT_ZYDIS_SRC

rm -rf "$out/src"; mkdir -p "$src"
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes "$out/tree.sha256"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - --) | tar -xf - -C "$src"
start=$(date +%s)
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=${JOBS:-2} nocheck noautodbgsym" \
        dpkg-buildpackage -b --no-sign) > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log" >&2
  echo "package.sh: dpkg-buildpackage failed (whole log: $out/build.log)" >&2
  exit 1
fi
mv "$out/src"/*.deb "$out/src"/*.buildinfo "$out/src"/*.changes "$out"/
rm -rf "$out/src"
echo "$sha" > "$out/tree.sha256"
ls "$out"/kjit-dkms_"$version"_*.deb "$out"/kjit_"$version"_*.deb
echo "package.sh: built in $(( $(date +%s) - start ))s" >&2
