#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Only include/ is a shared include path.  Fails when
#  1. a build file (CMakeLists.txt, cmake/*.cmake, Kbuild) adds an include
#     path other than include/, the build file's own folder (and below), a
#     build directory, or one of the EXCEPTIONS below;
#  2. a source includes a header of another component by a path into it:
#     "../..." anywhere, or a path that starts at a top folder other than the
#     engine's (core/, arch/): os/, tools/, plugins/, fuzz/, tests/, bench/,
#     docs/, include/ (whose headers are named from include/: "kjit/...",
#     "uapi/kjit/...").
# A component reaches another one's headers by linking its CMake library
# (which exports its own folder), or through include/.
# Usage: cmake/check-includes.sh [SOURCE_DIR]
set -uo pipefail
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
cd "$root" || exit 2
fail=0
bad() { echo "check-includes: $*" >&2; fail=1; }

# Include paths allowed beyond the rule, as "build file: path from the top"
# with the reason.  Keep this list short; each entry is a debt or a design.
EXCEPTIONS=(
  # The engine's sources name their headers from the top ("core/epoch.h",
  # "arch/x86/decoder.h"): core/ and arch/ are one component.
  "CMakeLists.txt: ."
  "cmake/kernel-objects.cmake: ."
  "arch/x86/disasm/CMakeLists.txt: ."
  # The fuzz targets name engine headers from the top, as the engine does.
  "fuzz/CMakeLists.txt: ."
)

is_exception() {
  local e
  for e in "${EXCEPTIONS[@]}"; do [ "$e" = "$1: $2" ] && return 0; done
  return 1
}

if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  tracked() { git ls-files -- "$@"; }
else
  tracked() {
    local p a=()
    for p in "$@"; do a+=(-o -path "./$p"); done
    find . \( -path ./build -o -path './build-*' -o -path ./.git \) -prune -o -type f \( "${a[@]:1}" \) -print |
      sed 's|^\./||'
  }
fi

# The include paths a build file adds, one a line, as written.
include_paths() {
  case "$1" in
    *Kbuild)
      grep -oE -- '-I *[^ ]+' "$1" | sed -E 's/^-I *//' ;;
    *)
      # target_include_directories(...) and include_directories(...),
      # possibly over several lines; -I flags anywhere.
      awk '
        /(^|[^a-z_])(target_)?include_directories *\(/ { on = 1 }
        on { buf = buf " " $0 }
        on && /\)/ { print buf; buf = ""; on = 0 }' "$1" |
        sed -E 's/.*target_include_directories *\( *[^ ]+//; s/.*include_directories *\(//; s/\).*//' | tr ' ' '\n' |
        grep -E '/|\$\{|\$\(' || true
      grep -oE -- '-I\$\{[^ ")]+|-I/[^ ")]+' "$1" | sed 's/^-I//' || true ;;
  esac
}

# 1. Build files.
while read -r f; do
  [ -n "$f" ] || continue
  dir=$(dirname "$f")
  while read -r p; do
    [ -n "$p" ] || continue
    case "$p" in
      *CMAKE_BINARY_DIR*|*CMAKE_CURRENT_BINARY_DIR*|*"\$(obj)"*) continue ;;
    esac
    q="$p"
    q="${q//\$\{CMAKE_SOURCE_DIR\}/$root}"
    q="${q//\$\{CMAKE_CURRENT_SOURCE_DIR\}/$root/$dir}"
    q="${q//\$(KJIT_INCLUDE)/$root/include}"
    q="${q//\$(src)/$root/$dir}"
    if [[ "$q" == *'$'* ]]; then bad "$f: include path $p: not understood (name it from CMAKE_SOURCE_DIR or CMAKE_CURRENT_SOURCE_DIR)"; continue; fi
    [[ "$q" == /* ]] || q="$root/$dir/$q"
    q=$(realpath -m "$q")
    rel="${q#"$root"}"; rel="${rel#/}"; [ -n "$rel" ] || rel=.
    [ "$rel" = include ] && continue
    # the build file's own folder and below (not for the top CMakeLists)
    if [ "$dir" != . ] && { [ "$rel" = "$dir" ] || [[ "$rel" == "$dir"/* ]]; }; then continue; fi
    is_exception "$f" "$rel" && continue
    bad "$f: include path $p reaches into $rel: only include/ is shared (link that component's library, or move the header to include/)"
  done < <(include_paths "$f")
done < <(tracked 'CMakeLists.txt' '*/CMakeLists.txt' 'cmake/*.cmake' 'Kbuild' '*/Kbuild')

# 2. Sources.
while read -r f; do
  [ -n "$f" ] || continue
  while IFS=: read -r line inc; do
    bad "$f:$line: #include $inc reaches into another component's folder (use include/ or link its library)"
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<](\.\./|(os|tools|plugins|fuzz|tests|bench|docs|include)/)' "$f" |
           sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*/\1:/')
done < <(tracked '*.c' '*.cc' '*.cpp' '*.h' '*.hh' '*.hpp' '*.S')

[ "$fail" = 0 ] && echo "check-includes: only include/ is shared; no source reaches into another component"
exit "$fail"
