#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prints the directory of an unpacked linux-image package (fetch-kernel.sh's
# OUTDIR/image, or any dpkg-deb -x of one) that holds its module trees
# (ABI/kernel/...): lib/modules, or usr/lib/modules in a package built for
# the merged /usr layout.  Fails when neither holds one.
# Usage: tools/lab/image-modules.sh IMAGE_DIR
set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 IMAGE_DIR" >&2; exit 2; }
for d in "$1/lib/modules" "$1/usr/lib/modules"; do
  if [ -n "$(ls -A "$d" 2>/dev/null)" ]; then echo "$d"; exit 0; fi
done
echo "image-modules: $1 has no module tree (lib/modules or usr/lib/modules)" >&2
exit 1
