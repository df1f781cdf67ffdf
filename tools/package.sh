#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds kjit's Debian source package (3.0 (quilt)) and, from its .dsc
# alone, the binary packages kjit-dkms and kjit: ./kjit-lab package runs it.
#   source: kjit_UPSTREAM.orig.tar.gz (the files git knows, with their
#     working-tree contents, less debian/), kjit_UPSTREAM.orig-zydis.tar.gz
#     (Debian's zydis orig tarball: tools/zydis-component.sh) and the
#     debian tarball, by dpkg-source -b;
#   binaries: dpkg-source -x of that .dsc into a fresh directory, then
#     dpkg-buildpackage -b there, without network (unshare -n): the .dsc
#     builds with only its Build-Depends.
# Usage: tools/package.sh [--if-stale] BUILD_DIR
#   -> BUILD_DIR/packages/kjit_V.dsc and its tarballs, kjit-dkms_V_amd64.deb,
#   kjit_V_amd64.deb, the .buildinfo, the .changes and build.log.
#   --if-stale keeps packages built from the tree as it is now (same files,
#   same contents: BUILD_DIR/packages/tree.sha256) and builds otherwise: a
#   test must never inspect packages of an older tree.
# Needs dpkg-dev, git and the Build-Depends of debian/control (./kjit-lab
# package installs them, and nothing else); Zydis's source comes from
# Debian (tools/lab/fetch-zydis-source.sh, cached in KJIT_BUILD).  Env: JOBS.
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
upstream="${version%-*}"
case "$version" in *-*) ;; *) echo "package.sh: $version is a native version: 3.0 (quilt) needs UPSTREAM-REVISION" >&2; exit 1 ;; esac
# What the packages are built from: every file git knows or would add, by
# name and content.
tree_sha() {
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 sha256sum -- | sha256sum | cut -d' ' -f1)
}
sha="$(tree_sha)"
if [ "$if_stale" = 1 ] && [ "$(cat "$out/tree.sha256" 2>/dev/null)" = "$sha" ] &&
   ls "$out/kjit_$version.dsc" "$out"/kjit-dkms_"$version"_*.deb "$out"/kjit_"$version"_*.deb 2>/dev/null; then
  exit 0
fi

rm -rf "$out/src" "$out/build"
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes "$out"/*.dsc "$out"/*.tar.* "$out/tree.sha256"
mkdir -p "$out/src"
start=$(date +%s)
log="$out/build.log"
: > "$log"
failed() {
  tail -40 "$log" >&2
  echo "package.sh: $1 failed (whole log: $log)" >&2
  exit 1
}
# The tarballs are reproducible: same tree, same bytes (mtime: the
# changelog entry's).
mtime="$(cd "$root" && dpkg-parsechangelog -S Timestamp)"
repro=(--sort=name --mtime="@$mtime" --owner=0 --group=0 --numeric-owner --format=gnu)
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '^debian/' |
   tar -cf - --null -T - --transform "flags=r;s|^|kjit-$upstream/|" "${repro[@]}") | gzip -n -9 > "$out/kjit_$upstream.orig.tar.gz"
"$here/zydis-component.sh" "$out/kjit_$upstream.orig-zydis.tar.gz" >> "$log" 2>&1 || failed tools/zydis-component.sh

# The tree dpkg-source -b packs: the two orig tarballs unpacked, and debian/.
s="$out/src/kjit-$upstream"
tar -xzf "$out/kjit_$upstream.orig.tar.gz" -C "$out/src"
tar -xzf "$out/kjit_$upstream.orig-zydis.tar.gz" -C "$s"
(cd "$root" && git ls-files -z --cached --others --exclude-standard -- debian | xargs -0 tar -cf - --) | tar -xf - -C "$s"
(cd "$out" && dpkg-source -b "src/kjit-$upstream") >> "$log" 2>&1 || failed "dpkg-source -b"
rm -rf "$out/src"

# The binaries from the .dsc alone, offline where this user may unshare.
# packaging.debs reads the first of these lines in build.log.
offline=()
if unshare -n true 2>/dev/null; then
  offline=(unshare -n); echo "package.sh: building from the .dsc without network (unshare -n)" >> "$log"
else
  echo "package.sh: cannot unshare -n: building from the .dsc with network" | tee -a "$log" >&2
fi
mkdir -p "$out/build"
dpkg-source -x "$out/kjit_$version.dsc" "$out/build/kjit-$upstream" >> "$log" 2>&1 || failed "dpkg-source -x"
if ! (cd "$out/build/kjit-$upstream" && DEB_BUILD_OPTIONS="parallel=${JOBS:-2} nocheck noautodbgsym" \
        ${offline[@]+"${offline[@]}"} dpkg-buildpackage -b --no-sign) >> "$log" 2>&1; then
  failed dpkg-buildpackage
fi
mv "$out/build"/*.deb "$out/build"/*.buildinfo "$out/build"/*.changes "$out"/
rm -rf "$out/build"
echo "$sha" > "$out/tree.sha256"
ls "$out/kjit_$version.dsc" "$out"/kjit-dkms_"$version"_*.deb "$out"/kjit_"$version"_*.deb
echo "package.sh: built in $(( $(date +%s) - start ))s" >&2
