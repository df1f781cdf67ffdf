# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # report and here are for the sourcing test
# Sourced by the kjit-report host tests (tests/report/*.sh) after their
# `set -euo pipefail`, with the report binary as $1: report (the binary),
# here (this directory), T (a scratch directory removed on exit), fail.
report="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
