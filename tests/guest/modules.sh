#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel modules are code like any other, on a flavour that builds ext4 as a
# module (default Debian's generic flavour of tools/kernel-flavours; its image, kjit.ko and
# the debug ext4.ko go to BUILD_DIR/flavours/ABI, as tests/guest/flavours.sh
# keeps them).  In the guest (tests/guest/modules-guest.sh): `kjitctl list
# 'ext4_*'` lists ext4's functions, `kjitctl record -t bbcount -e
# ext4_file_read_iter` records a read of a file on the (ext4) share, a KCOV
# client's openat of it gives canonical PCs in ext4's text, every
# ext4_* function is attached and ext4 code cached, then the share is
# unmounted and ext4 unloaded under those attachments: kjit detaches them,
# keeps working, and unloads cleanly.  On the host, kjit-report names ext4's
# blocks ext4:ext4_file_read_iter+0x.. with file:line in fs/ext4/*.c from
# the -dbg package's ext4.ko; drcov has an ext4.ko module entry; lcov has
# fs/ext4 sources.
# Usage: tests/guest/modules.sh BUILD_DIR
# Env: KJIT_MODULES_KERNEL (the flavour, default the generic one of
#   tools/kernel-flavours).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
f="${KJIT_MODULES_KERNEL:-$(grep -E -- '^[0-9.]+-[0-9]+-amd64$' "$root/tools/kernel-flavours" | head -n1)}"
report="$B/guest-bin/kjit-report"
[ -x "$report" ] || { echo "modules: $report missing (cmake target kjit-report)" >&2; exit 2; }
# shellcheck source=tests/guest/flavour-lab.sh
. "$root/tests/guest/flavour-lab.sh"
flavour_lab modules "$B" "$f" || exit $?
d="$flavour_dir"
grep -qx 'CONFIG_EXT4_FS=m' "$d/lab/kernel/config" || { echo "modules: $f builds ext4 in: no module to test" >&2; exit 2; }
dbg="$(KJIT_DEBUG_MODULES=ext4 KJIT_DEBUG_SOURCE=0 "$root/tools/lab/fetch-debug.sh" "$d/lab/debug" 2> "$d/fetch-debug.log" | tail -n1)" \
  || { tail -n 20 "$d/fetch-debug.log" >&2; echo "modules: FAIL: fetching the $f debug files" >&2; exit 1; }
flavour_module modules "$f" || exit 1

share_guest_bin "$B"
share="$d/guest-modules"
share_new "$share"
share_kjit "$share" "$d/module/kjit.ko" "$root"
mkdir -p "$share/data"
seq 1 20000 | sed 's/^/an ext4 line /' > "$share/data/ext4-file.txt"   # ~400 KiB: several reads
# The KCOV check: the client, and the vmlinux's _text, which names its
# canonical PCs.
cp "$KJIT_GUEST_BIN/kcov_client" "$share/"
nm "$dbg/vmlinux-dbg" | awk '$3 == "_text" {print "0x" $1}' > "$share/link-text.txt"
share_script "$share" "$root/tests/guest/modules-guest.sh"

rc=0
"$root/tools/lab/run-guest.sh" --share "$share" --script "$share/run.sh" --smp 2 --tcg-single --timeout 420 || rc=$?
verdict_begin modules
bad() { verdict_bad "$@"; }
verdict_boot "$share" "$rc" MODULES-GUEST-DONE
verdict_expect_checks "$share" "$root/tests/guest/checks/modules.list"

# The report: ext4's blocks by their canonical names, with ext4's lines.
data="$share/ext4.data"
if [ ! -s "$data" ]; then
  bad "no ext4.data"
else
  args=(-i "$data" --vmlinux "$dbg/vmlinux-dbg")
  "$report" "${args[@]}" > "$share/report.txt" 2> "$share/report.err" || bad "report: $(head -n3 "$share/report.err")"
  grep -E ' ext4:ext4_file_read_iter(\+0x[0-9a-f]+)?/0x[0-9a-f]+ +fs/ext4/[a-z_]+\.c:[0-9]+$' "$share/report.txt" \
    > "$share/ext4-blocks.txt" || bad "report: no block of ext4:ext4_file_read_iter with file:line in fs/ext4"
  echo "modules: $(wc -l < "$share/ext4-blocks.txt") blocks of ext4_file_read_iter, e.g.: $(head -n1 "$share/ext4-blocks.txt" | awk '{$1=$2=$3=""; print}')"
  "$report" "${args[@]}" -f json > "$share/report.json" 2>> "$share/report.err" || bad "report json"
  python3 - "$share/report.json" <<'PY' || bad "json: ext4 blocks are not named module-relative with lines"
import json, sys
j = json.load(open(sys.argv[1]))
mine = [b for b in j["blocks"] if b.get("module") == "ext4"]
assert mine, "no ext4 block"
assert all(b["function"].startswith("ext4:") and "stext_offset" not in b for b in mine), mine[:3]
assert any(b.get("file", "").startswith("fs/ext4/") for b in mine), mine[:3]
ext4 = [m for m in j["modules"] if m["name"] == "ext4"]
assert ext4 and ext4[0]["build_id"] and ext4[0].get("debug_file", "").endswith("ext4.ko"), ext4
PY
  "$report" "${args[@]}" -f drcov > "$share/report.drcov" 2>> "$share/report.err" || bad "report drcov"
  grep -aqE '^ [0-9]+, 0x[0-9a-f]+, 0x[0-9a-f]+, .*, ext4\.ko$' "$share/report.drcov" || bad "drcov: no ext4.ko module entry"
  "$report" "${args[@]}" -f lcov > "$share/report.info" 2>> "$share/report.err" || bad "report lcov"
  grep -qE '^SF:fs/ext4/file\.c$' "$share/report.info" || bad "lcov: no fs/ext4/file.c"
  "$report" "${args[@]}" -f annotate 'ext4:ext4_file_read_iter' > "$share/annotate.txt" 2>> "$share/report.err" \
    || bad "annotate ext4:ext4_file_read_iter: $(tail -n1 "$share/report.err")"
fi
[ -s "$share/going.txt" ] && echo "modules: $(cat "$share/going.txt")"
verdict_end; exit $?
