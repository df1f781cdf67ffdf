#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unpacks the Debian source a kernel image was built from, exactly that
# upload: linux-source-MAJOR at the version the image package names in
# Built-Using ("linux (= 6.1.192-3)" in a signed image), or at its own
# version when its Source is linux itself (an -unsigned image).  Debian's
# index holds several uploads of linux-source-MAJOR at once, and the newest
# need not be the image's.  The tree is Debian's (its patches applied, no
# featureset's: not the rt flavour's source).
#   OUTDIR/.kjit-source   "linux-source-MAJOR VERSION": what was unpacked;
#                         a tree of another upload is replaced
# Usage: tools/lab/fetch-source.sh IMAGE_DEB OUTDIR   (prints OUTDIR)
#   IMAGE_DEB: a linux-image .deb (fetch-kernel.sh keeps it in its OUTDIR)
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 IMAGE_DEB OUTDIR" >&2; exit 2; }
deb="$1" out="$2"
fail() { echo "fetch-source: $*" >&2; exit 1; }

built_using="$(dpkg-deb -f "$deb" Built-Using)" || fail "$deb: not a .deb"
uses_linux='(^|[ ,])linux(-[0-9.]+)? \(= ([^)]+)\)'
is_linux='^linux(-[0-9.]+)?( \(([^)]+)\))?$'
if [[ "$built_using" =~ $uses_linux ]]; then
  ver="${BASH_REMATCH[3]}"
elif [[ "$(dpkg-deb -f "$deb" Source)" =~ $is_linux ]]; then
  ver="${BASH_REMATCH[3]:-$(dpkg-deb -f "$deb" Version)}"   # "Source: linux (V)" when V differs
else
  fail "$deb names no linux source (Built-Using: '$built_using')"
fi
major="$(cut -d. -f1-2 <<<"$ver")"                  # 6.1.192-3 -> 6.1
pkg="linux-source-$major"
want="$pkg $ver"
if [ "$(cat "$out/.kjit-source" 2>/dev/null)" = "$want" ] && [ -s "$out/Makefile" ]; then
  echo "$out"; exit 0
fi

mkdir -p "$(dirname "$out")"
tmp="$(mktemp -d "$(dirname "$out")/source.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# apt-get download runs as _apt when root: give it a writable directory.
chmod 777 "$tmp"
get() { (cd "$tmp" && apt-get download "$pkg=$ver" </dev/null) >&2; }
if ! get && ! { apt-get update </dev/null >&2 && get; }; then
  fail "$pkg $ver is not in Debian's index (it keeps the last uploads; snapshot.debian.org keeps them all)"
fi
mkdir "$tmp/tree"
# The package holds the tree as one tar.xz: stream it out, never on disk twice.
dpkg-deb --fsys-tarfile "$tmp/${pkg}_"*.deb | tar -xO "./usr/src/$pkg.tar.xz" \
  | tar -xJ -C "$tmp/tree" --strip-components=1
[ -s "$tmp/tree/Makefile" ] || fail "$pkg $ver: no kernel tree in ./usr/src/$pkg.tar.xz"
echo "$want" > "$tmp/tree/.kjit-source"
rm -rf "$out"
mv "$tmp/tree" "$out"
echo "$out"
