#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Checks that kjit.ko's files depend on each other in one direction only.
#
# The file-level graph is the union of
#  - calls and references: an edge A -> B when A.o needs a symbol that B.o
#    defines (nm -u / nm --defined-only, only kjit's own objects, listed in
#    MODULE_DIR/kjit.mod; the six examples/*.o count as one node "examples");
#  - includes: an edge A -> B when A.c, A.h or A.S includes "B.h" (a header
#    counts as the file of the same name beside it that implements it; a
#    file is named without its folder, capture/capture_log.c is capture_log;
#    include/kjit's
#    engine.h and plugin.h are the engine's, kjit_examples.h the examples';
#    other headers are interfaces with no file behind them: os_shim.h,
#    types.h, the uapi and capture-format headers).
# It fails on a cycle, and on an edge that goes up the layer order below (a
# file may use files of its own layer or of layers beneath it).  A new file
# must be given a layer here.  It also fails when a file of the entry path
# (ENTRY_PATH below) names a built-in tool instead of asking the tool table.
#
# Usage: os/linux/check-layers.sh MODULE_DIR [--print]
#   MODULE_DIR: where Kbuild built kjit.ko (BUILD_DIR/module).
#   --print: print the graph, one "file -> file" line per edge.
set -euo pipefail

# Top to bottom.  One line per layer.
LAYERS=(
  "control module"                       # ioctl decoding; init and exit
  "config capture"                       # what the ioctls drive
  "capture_regs"                         # the capture's register records (capture/)
  "capture_log"                          # its recorder: the owner task, the events
  "capture_buf"                          # its event and code buffers
  "dispatch_gates entry_trampoline direct_yield"  # translated code's way out, the direct entry (asm), BPF's hand-over
  "entry_attach sched_resume textwatch crash_report kernel_quirks kernel_probe exports"  # attach/detach and the ftrace ops, sleeps, text changes, oops reports, kernel bugs named at load, plugin API
  "entry_decide exit_gates"              # the entry decision (both paths), the gates' C side
  "builtin_tools"                        # the tools' table: what the entry path asks of the active tool
  "reclaim_work"                         # reclaiming a full cache epoch from a work item
  "task_filter"                          # the policy's filter by task, kept per CPU at each switch-in
  "entry_policy"                         # what every entry applies and counts
  "entry_direct"                         # the direct ops
  "engine_host"                          # the engine's one owner
  "callstack kcov examples"              # plugins compiled into kjit.ko
  "kcov_cmp"                             # kcov's comparison operands
  "kjit_engine zydis_kernel"             # the C++ engine (core/, arch/x86/) and Zydis
  "shim extable"                         # what the engine calls (os_shim.h)
  "quiesce"
  "cache_mem percpu_mem symbols fentry entry_table entry_guard attachments text_deps core_extable"  # memory, kernel symbols, fentry sites, the trampoline's table, the guard, the attachments, what translations read, the core exception table
  "ksym_call cache_area"                 # calling kernel functions found by name (IBT-safe stubs); the cache and stub sections
)

# The entry path: it asks the tool table (builtin_tools.h) what the active
# tool does at an entry and names no tool, neither by its id (KJIT_TOOL_*),
# by its hook bit nor by its functions or header.
ENTRY_PATH=(entry_attach entry_decide exit_gates entry_policy reclaim_work entry_direct
            entry_table entry_guard entry_trampoline dispatch_gates sched_resume)
TOOL_NAMES='KJIT_TOOL_[A-Z]|KJIT_ENTRY_FILTER_[A-Z]|KJIT_ON_ENTRY_[A-Z]|kjit_(callstack|kcov)_|#include "(callstack|kcov)\.h"'

[ $# -ge 1 ] || { echo "usage: $0 MODULE_DIR [--print]" >&2; exit 2; }
mod="$(cd "$1" && pwd)"
print=0
[ "${2:-}" = "--print" ] && print=1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -f "$mod/kjit.mod" ] || { echo "check-layers: $mod/kjit.mod missing (build the module first)" >&2; exit 1; }

node_of_obj() {   # path/to/x.o -> node name
  local rel="${1#"$mod"/}"
  case "$rel" in
    examples/*) echo examples ;;
    *) basename "$rel" .o ;;
  esac
}

declare -A rank def
for i in "${!LAYERS[@]}"; do
  for n in ${LAYERS[$i]}; do rank[$n]=$i; done
done

objs=$(tr ' ' '\n' < "$mod/kjit.mod" | grep -v '^$')
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT

# Symbol edges.
for o in $objs; do
  n=$(node_of_obj "$o")
  for s in $(nm --defined-only -g "$o" | awk '$2 ~ /^[A-Z]$/ && $2 != "U" {print $3}'); do
    def[$s]=$n
  done
done
for o in $objs; do
  n=$(node_of_obj "$o")
  for s in $(nm -u "$o" | awk '{print $2}'); do
    t="${def[$s]:-}"
    [ -n "$t" ] && [ "$t" != "$n" ] && echo "$n $t"
  done
done >> "$edges"

# Include edges (sources, not the Kbuild copy).
header_node() {   # included path, the including file's folder -> node, or nothing for an interface header
  case "$1" in
    kjit/engine.h|kjit/plugin.h) echo kjit_engine ;;
    kjit_examples.h) echo examples ;;
    kjit/*|uapi/*) ;;
    *.h) local h
         # as the compiler looks: beside the includer, then in os/linux (-I)
         for h in "$2/${1%.h}" "$here/${1%.h}"; do
           [ -f "$h.h" ] || continue
           if [ -f "$h.c" ] || [ -f "$h.S" ]; then basename "$h"; fi
           break
         done ;;
  esac
}
# The module's sources: os/linux and its folders but conftest/ (probes of
# the kernel's headers, not part of kjit.ko).
while read -r f; do
  b=$(basename "$f"); n="${b%.*}"
  [ -n "${rank[$n]:-}" ] || [ "${b##*.}" = h ] || { echo "check-layers: $b has no layer (add it to LAYERS in $0)" >&2; exit 1; }
  # a header with no implementing file of its name is an interface
  [ "${b##*.}" = h ] && [ -z "${rank[$n]:-}" ] && continue
  while read -r inc; do
    t=$(header_node "$inc" "$(dirname "$f")")
    [ -n "$t" ] && [ "$t" != "$n" ] && echo "$n $t"
  done < <(sed -n 's/^#include "\(.*\)".*/\1/p' "$f")
done < <(find "$here" -path "$here/conftest" -prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.S' \) -print | sort) >> "$edges"

for n in "${ENTRY_PATH[@]}"; do
  for f in "$here/$n".[chS]; do
    [ -f "$f" ] || continue
    if grep -nE "$TOOL_NAMES" "$f" | sed "s|^|check-layers: $(basename "$f"):|" >&2; then
      echo "check-layers: the entry path names a tool: ask the tool table (builtin_tools.h)" >&2
      tool_named=1
    fi
  done
done

sort -u "$edges" -o "$edges"
[ "$print" = 1 ] && awk '{print $1 " -> " $2}' "$edges"

fail=${tool_named:-0}
while read -r a b; do
  for x in "$a" "$b"; do
    [ -n "${rank[$x]:-}" ] || { echo "check-layers: $x has no layer (add it to LAYERS in $0)" >&2; fail=1; }
  done
  if [ -n "${rank[$a]:-}" ] && [ -n "${rank[$b]:-}" ] && [ "${rank[$b]}" -lt "${rank[$a]}" ]; then
    echo "check-layers: $a -> $b goes up the layer order" >&2
    fail=1
  fi
done < "$edges"

# Cycles: tsort reports them ("input contains a loop").
if ! tsort "$edges" > /dev/null 2> "$edges.err"; then
  echo "check-layers: dependency cycle:" >&2
  grep -v 'input contains a loop' "$edges.err" | sed 's/^tsort: /  /' >&2
  fail=1
fi
rm -f "$edges.err"
[ "$fail" = 0 ] || exit 1
echo "check-layers: $(wc -l < "$edges") edges between $(tr ' ' '\n' <<< "${LAYERS[*]}" | grep -c .) files, no cycle, none up the layer order, no tool named on the entry path"
