#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fails if a function that include/kjit/plugin.h declares is not exported by
# os/linux/exports.c (a plugin module would not load against kjit.ko).
# Usage: os/linux/check-exports.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# static inline functions are compiled into each plugin: nothing to export.
declared=$(grep -vE '^static inline' "$here/../../include/kjit/plugin.h" |
  grep -oE '\bkjit_[a-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | sort -u)
exported=$(grep -oE 'EXPORT_SYMBOL_GPL\(kjit_[a-z0-9_]+\)' "$here/exports.c" | sed 's/.*(\(.*\))/\1/' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$missing" ] || { echo "check-exports: declared in plugin.h but not exported: $missing" >&2; exit 1; }
echo "check-exports: $(echo "$declared" | wc -l) plugin.h functions exported"
