#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prints the newest kernel ABI of ABI's line and flavour that Debian's apt
# index (as last updated) has a linux-image package for, e.g.
# 6.1.0-57-cloud-amd64 for 6.1.0-56-cloud-amd64, or
# 6.12.118+deb12-rt-amd64 for 6.12.115+deb12-rt-amd64.  Debian's archive
# keeps only the last uploads: fetch-kernel.sh names this one when the
# pinned ABI has gone.  Fails when the index holds none.
# Usage: tools/lab/newest-abi.sh [ABI]   (default: tools/lab/abi.sh's)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -gt 0 ]; then ABI="$1"; else
  # shellcheck source=tools/lab/abi.sh
  . "$here/abi.sh"
fi

# Debian 13's kernels are in the lab's private trixie index, not the
# host's: there the flavour's metapackage names the newest.
case "$ABI" in
  *+deb13-*) exec "$here/fetch-trixie-deb.sh" --newest-abi "${ABI#*+deb13-}" ;;
esac

# The line is the ABI with the number that changes from one upload to the
# next left open: Debian's own kernels count ABIs (6.1.0-N-FLAVOUR), the
# kernels of another release's line count upstream's stable releases
# (6.12.N+deb12-FLAVOUR).
if [[ "$ABI" =~ ^([0-9]+\.[0-9]+\.[0-9]+-)[0-9]+(-.+)$ ]] ||
   [[ "$ABI" =~ ^([0-9]+\.[0-9]+\.)[0-9]+(\+[A-Za-z0-9]+-.+)$ ]]; then
  head="${BASH_REMATCH[1]}" tail="${BASH_REMATCH[2]}"
else
  echo "newest-abi: cannot tell the line of '$ABI'" >&2; exit 2
fi
re() { local r="${1//./\\.}"; echo "${r//+/\\+}"; }
mapfile -t names < <(apt-cache search --names-only "^linux-image-$(re "$head")[0-9]+$(re "$tail")\$" | cut -d' ' -f1)
# apt-cache search also lists names that only a deb-src index mentions (a
# source package's binaries, long gone): keep those with a binary package.
newest=""
if [ ${#names[@]} -gt 0 ]; then
  newest="$(apt-cache madison "${names[@]}" | awk -F' *[|] *' '$3 ~ / Packages$/ {sub(/^ +/, "", $1); print $1}' \
            | sed 's/^linux-image-//' | sort -uV | tail -n1)"
fi
[ -n "$newest" ] || { echo "newest-abi: Debian's index has no linux-image-$head*$tail" >&2; exit 1; }
echo "$newest"
