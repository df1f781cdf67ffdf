#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build (once, cached) the Debian guest root for the bench: debootstrap
# --variant=minbase bookworm with nginx-light, wrk, bpftrace and procps from
# Debian's registry, packed into an ext4 image (tools/lab/root-image.sh).
# Usage: bench/lib/make-root.sh CACHE_DIR     -> prints CACHE_DIR/root.img
set -euo pipefail
# shellcheck source=tools/lab/root-image.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/lab/root-image.sh"
# Where the guest mounts the share.
share_mount() { mkdir -p "$1/mnt/kjit"; }
root_image "$1" bookworm --include nginx-light,wrk,bpftrace,procps --configure share_mount --label kjitroot --room 400
