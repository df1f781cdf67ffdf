#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Checks that a relocatable object can be linked into the kernel module:
#  - every undefined symbol is one the module provides or the kernel exports:
#    kjit_os_* (the shim), Zydis*/Zyan* (kernel-flag Zydis in the module),
#    memcpy/memset/memmove/memcmp, __x86_indirect_thunk_*, __x86_return_thunk;
#  - no global constructors (.init_array/.ctors sections);
#  - no C++ runtime: __cxa_*, _Unwind_*, operator new/delete, __stack_chk_fail.
# Usage: cmake/check-freestanding.sh OBJ [NM] [OBJDUMP]
set -euo pipefail
obj="${1:?usage: check-freestanding.sh OBJ}"
NM="${2:-nm}"; OBJDUMP="${3:-objdump}"
[ -f "$obj" ] || { echo "check-freestanding: $obj not found" >&2; exit 1; }
fail=0

undef="$("$NM" -u "$obj" | awk '{print $NF}' | sort -u)"
allowed='^(kjit_os_.*|Zydis.*|Zyan.*|memcpy|memset|memmove|memcmp|__x86_indirect_thunk_.*|__x86_return_thunk)$'
bad="$(printf '%s\n' "$undef" | grep -v -E "$allowed" | grep -v '^$' || true)"
if [ -n "$bad" ]; then
  echo "check-freestanding: $obj: undefined symbols outside the allowed set:" >&2
  printf '%s\n' "$bad" | while read -r s; do
    printf '  %s  (%s)\n' "$s" "$(echo "$s" | c++filt)" >&2
  done
  fail=1
fi

secs="$("$OBJDUMP" -h "$obj" | awk '$2 ~ /^\.(init_array|ctors|fini_array|dtors)/ {print $2}')"
if [ -n "$secs" ]; then
  echo "check-freestanding: $obj: global constructors/destructors present: $secs" >&2
  fail=1
fi

# Any reference (defined or not) to the C++ runtime.  operator new/delete
# mangle as _Znw*/_Zna*/_Zdl*/_Zda*.
rt="$("$NM" "$obj" | awk '{print $NF}' | grep -E '^(__cxa_|_Unwind_|_Znw|_Zna|_Zdl|_Zda|__stack_chk_fail|__dso_handle|__gxx_personality)' | sort -u || true)"
if [ -n "$rt" ]; then
  echo "check-freestanding: $obj: C++ runtime references:" >&2
  # shellcheck disable=SC2086  # one symbol per word: split on purpose
  printf '  %s\n' $rt >&2
  fail=1
fi

if [ "$fail" = 0 ]; then
  echo "check-freestanding: $obj OK ($(printf '%s\n' "$undef" | grep -c . || true) undefined symbols, all allowed)"
fi
exit "$fail"
