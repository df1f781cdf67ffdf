#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The orig-zydis component of kjit's source package: Debian's zydis orig
# tarball (tools/lab/fetch-zydis-source.sh) repacked with top directory
# zydis/ (where dpkg-source -x unpacks a component) and one added file,
# zydis/debian-source, naming the Debian source version it came from:
# debian/rules reads it for kjit-dkms's Built-Using.  Zydis is never kept
# in git; this is made at package-build time.
# The tarball is reproducible (sorted names, fixed owner and mtime, gzip
# -n): built twice from the same zydis source, it is the same file.
# Usage: tools/zydis-component.sh OUT.tar.gz   (OUT: kjit_UPSTREAM.orig-zydis.tar.gz)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT.tar.gz" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"
zsrc="$("$here/lab/fetch-zydis-source.sh" | tail -n1)"
zver="$(dpkg-parsechangelog -l "$zsrc/debian/changelog" -S Version)"
zup="${zver%-*}"; zup="${zup#*:}"
# apt-get source leaves the orig tarball beside the unpacked directory.
orig=""
for f in "$(dirname "$zsrc")"/zydis_"$zup".orig.tar.*; do
  case "$f" in *.asc) ;; *) [ -f "$f" ] && orig="$f" ;; esac
done
[ -n "$orig" ] || { echo "zydis-component: no zydis_$zup.orig.tar.* beside $zsrc" >&2; exit 1; }
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
mkdir "$t/x"
tar -xf "$orig" -C "$t/x"
top=("$t"/x/*)
if [ "${#top[@]}" -ne 1 ] || [ ! -d "${top[0]}" ]; then
  echo "zydis-component: $orig has no single top directory" >&2; exit 1
fi
mv "${top[0]}" "$t/zydis"
cat > "$t/zydis/debian-source" <<EOF
Source: zydis
Version: $zver
Orig-Tarball: $(basename "$orig")
Orig-Sha256: $(sha256sum "$orig" | cut -d' ' -f1)
Comment: Debian's zydis orig tarball, repacked as kjit's orig-zydis
 component by tools/zydis-component.sh; debian/rules reads Version for
 kjit-dkms's Built-Using.
EOF
# The mtime of Debian's changelog entry: the same zydis gives the same bytes.
mtime="$(dpkg-parsechangelog -l "$zsrc/debian/changelog" -S Timestamp)"
tar -C "$t" --sort=name --mtime="@$mtime" --owner=0 --group=0 --numeric-owner \
    --format=gnu -cf - zydis | gzip -n -9 > "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
