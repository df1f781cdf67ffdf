#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate tests/data/kallsyms-$ABI.txt.xz and tests/data/kernel-facts-$ABI.txt
# from a live boot of the pinned kernel (nokaslr, root => real addresses),
# then verify the list against the extracted vmlinux.
#
# Usage: tools/lab/extract-kallsyms.sh            boot, extract, verify, write
#        tools/lab/extract-kallsyms.sh --verify   only verify the committed list
# Env: KJIT_BUILD (default ./build/lab).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
BUILD="${KJIT_BUILD:-$PWD/build/lab}"
LIST="$repo/tests/data/kallsyms-$ABI.txt.xz"
FACTS="$repo/tests/data/kernel-facts-$ABI.txt"
kdir="$("$here/fetch-kernel.sh" "$BUILD/kernel" | tail -n1)"

verify() {
  python3 - "$1" "$kdir/vmlinux" <<'PY'
import lzma, struct, sys
lst, vmlinux = sys.argv[1], sys.argv[2]
syms = []
with lzma.open(lst, "rt") as f:
    for line in f:
        a, t, n = line.split()[:3]
        syms.append((int(a, 16), t, n))
addrs = [a for a, _, _ in syms]
assert addrs == sorted(addrs), "list not sorted by address"
assert all(t in "tTwW" for _, t, _ in syms), "non-text type in list"
by = {n: a for a, _, n in syms}
data = open(vmlinux, "rb").read()
assert data[:4] == b"\x7fELF"
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
secs = []
for i in range(shnum):
    name, typ, flags, addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
    secs.append([name, typ, flags, addr, off, size])
stro = secs[shstrndx][4]
def nm(o): return data[stro + o: data.index(b"\0", stro + o)].decode()
sec = {nm(s[0]): s for s in secs}
text = sec[".text"]
def in_sec(a, s): return s[3] <= a < s[3] + s[5]
def read(a, n):
    for s in secs:
        if s[1] == 1 and in_sec(a, s):
            o = s[4] + a - s[3]; return data[o:o + n]
    return None
errors = []
def check(c, msg):
    if not c: errors.append(msg)
check(by["_stext"] == text[3], "_stext != .text address")
check(by["_etext"] == text[3] + text[5], "_etext != end of .text")
check(by["_sinittext"] == sec[".init.text"][3], "_sinittext != .init.text address")
exe = [s for s in secs if s[2] & 4]
outside = [n for a, t, n in syms if not any(in_sec(a, s) or a == s[3] + s[5] for s in exe)]
check(not outside, "%d symbols outside executable sections, e.g. %s" % (len(outside), outside[:5]))
# ret; int3, the ret padded with NOPs where it is an alternative's
# original (a kernel that can patch in a warning jump instead).
thunk = read(by["__x86_return_thunk"], 16)
thunk = thunk[:thunk.find(b"\xcc") + 1]
check(len(thunk) >= 2 and thunk[0] == 0xC3 and thunk[1:-1] == b"\x90" * (len(thunk) - 2),
      "__x86_return_thunk is not ret;int3")
# Function padding (CONFIG_FUNCTION_PADDING_BYTES, call depth tracking):
# __pfx_F names the NOPs right before F, where calls land once the
# kernel patches the accounting in; they are not functions themselves.
at = {}
for a, _, n in syms: at.setdefault(a, set()).add(n)
pfx = [(a, n) for a, _, n in syms if n.startswith("__pfx_")]
bad = [n for a, n in pfx if n[6:] not in at.get(a + 16, ()) or read(a, 16) != b"\x90" * 16]
check(not bad, "%d __pfx_ symbols are not 16 NOPs before their function, e.g. %s" % (len(bad), bad[:5]))
# Under IBT a function starts with endbr64 and its fentry call follows it.
fentry = by["__fentry__"]
calls = total = ibt = 0
def calls_fentry(a, b): return b[0] == 0xE8 and a + 5 + struct.unpack("<i", b[1:5])[0] == fentry
for a, t, n in syms:
    if t != "T" or not in_sec(a, text) or n.startswith("__pfx_"): continue
    b = read(a, 9); total += 1
    if calls_fentry(a, b): calls += 1
    elif b[:4] == b"\xf3\x0f\x1e\xfa" and calls_fentry(a + 4, b[4:]): calls += 1; ibt += 1
check(calls > total // 3, "only %d/%d global functions start with call __fentry__" % (calls, total))
for n in ("memcpy", "strlen"):
    check(n in by and in_sec(by[n], text), n + " not in .text")
for e in errors: print("verify: FAIL:", e, file=sys.stderr)
print("verify: %d symbols%s; .text %#x-%#x; %d/%d global .text functions start with call __fentry__%s (%#x); "
      "__x86_return_thunk=%#x bytes %s; memcpy=%#x strlen=%#x: %s"
      % (len(syms), " (%d __pfx_ padding)" % len(pfx) if pfx else "", text[3], text[3] + text[5],
         calls, total, " (%d after endbr64)" % ibt if ibt else "", fentry, by["__x86_return_thunk"],
         thunk.hex(" "), by["memcpy"], by["strlen"], "OK" if not errors else "FAILED"))
sys.exit(1 if errors else 0)
PY
}

if [ "${1:-}" = "--verify" ]; then verify "$LIST"; exit $?; fi

share="$BUILD/kallsyms-share"
rm -rf "$share"; mkdir -p "$share"
cat > "$BUILD/kallsyms-run.sh" <<'GUEST'
cat /proc/kallsyms > kallsyms.raw
cat /proc/cmdline > cmdline
grep . /sys/devices/system/cpu/vulnerabilities/* > vulnerabilities || true
uname -r > uname
GUEST
# -cpu max whatever KJIT_GUEST_CPU says: the committed vulnerability facts
# are the lab's default model's.
# Without the lab's kernel fixes: they are built from the list this boot
# makes (a new ABI has none yet), and a boot this short does not reach the
# bug they work around.
KJIT_LAB_FIXES=0 "$here/run-guest.sh" --share "$share" --script "$BUILD/kallsyms-run.sh" --timeout 300 --nokaslr --cpu max
[ "$(cat "$share/uname")" = "$ABI" ] || { echo "extract-kallsyms: guest ran $(cat "$share/uname"), expected $ABI" >&2; exit 1; }
grep -q '^0000000000000000 T _text$' "$share/kallsyms.raw" && { echo "extract-kallsyms: addresses hidden" >&2; exit 1; }

# Text symbols of the core kernel: t/T always; W/w only inside
# [_stext,_etext) or [_sinittext,_einittext); no "[module]" entries.
mkdir -p "$(dirname "$LIST")"
awk '
  NF == 3 { a[NR] = $1; t[NR] = $2; n[NR] = $3
            if ($3 == "_stext") s = $1; if ($3 == "_etext") e = $1
            if ($3 == "_sinittext") is = $1; if ($3 == "_einittext") ie = $1 }
  END { for (i = 1; i <= NR; i++) {
          if (!(i in a)) continue
          if (t[i] == "t" || t[i] == "T") print a[i], t[i], n[i]
          else if ((t[i] == "w" || t[i] == "W") &&
                   ((a[i] >= s && a[i] < e) || (a[i] >= is && a[i] < ie))) print a[i], t[i], n[i]
        } }' "$share/kallsyms.raw" \
  | LC_ALL=C sort -s -k1,1 -k3,3 | xz -9 -T1 > "$LIST.tmp"
verify "$LIST.tmp"
mv "$LIST.tmp" "$LIST"
echo "extract-kallsyms: wrote $LIST ($(stat -c %s "$LIST") bytes, $(xz -dc "$LIST" | wc -l) symbols)"

{ echo "cmdline $(cat "$share/cmdline")"
  sed -e 's|^/sys/devices/system/cpu/vulnerabilities/|vulnerability.|' -e 's|:| |' "$share/vulnerabilities"
} > "$BUILD/live-facts.txt"
# Apart first: kernel-facts.sh keeps the layout lines of the file it replaces.
"$here/kernel-facts.sh" "$LIST" "$BUILD/live-facts.txt" > "$FACTS.tmp"
mv "$FACTS.tmp" "$FACTS"
echo "extract-kallsyms: wrote $FACTS"
