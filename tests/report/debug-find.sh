#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tools/report/debug_find.cc against a fake /usr/lib/debug (KJIT_DEBUG_ROOT)
# and a debuginfod server on 127.0.0.1: each place is found when it holds
# the recorded kernel's build id, passed over when it holds another one,
# and the error names the Debian package when nothing has it.
# Usage: tests/report/debug-find.sh DEBUG_FIND_PROBE
set -uo pipefail
probe="$1"
t="$(mktemp -d)"
server=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() { [ -z "$server" ] || kill "$server" 2>/dev/null; rm -rf "$t"; }
trap cleanup EXIT
fail=0
pass() { echo "PASS $1 ${2:-}"; }
bad() { echo "FAIL $1: ${2:-}"; fail=1; }

# Two small ELF files with _stext and different build ids, as vmlinuxes.
printf 'void _stext(void) {}\nint which = %s;\n' 1 > "$t/a.c"
printf 'void _stext(void) {}\nint which = %s;\n' 2 > "$t/b.c"
for v in a b; do
  gcc -g -nostdlib -Wl,--build-id=sha1 -Wl,-e,_stext -o "$t/$v.elf" "$t/$v.c" || { echo "FAIL: gcc"; exit 1; }
done
id_of() { readelf -n "$1" | awk '/Build ID/ {print $3}'; }
ida="$(id_of "$t/a.elf")" idb="$(id_of "$t/b.elf")"
if [ -z "$ida" ] || [ "$ida" = "$idb" ]; then echo "FAIL: no distinct build ids"; exit 1; fi
rel=6.1.0-99-test-amd64
R="$t/root"
run() { env -u DEBUGINFOD_URLS KJIT_DEBUG_ROOT="$R" "$probe" "$rel" "$ida" > "$t/out" 2> "$t/err"; }

# Nothing installed: fails, naming the package and what it tried.
mkdir -p "$R"
if run; then bad absent "found $(cat "$t/out")"
elif grep -q "apt-get install linux-image-$rel-dbg" "$t/err" && grep -q "DEBUGINFOD_URLS is not set" "$t/err"; then pass absent
else bad absent "$(cat "$t/err")"; fi

# Debian's -dbg package place, by release.
mkdir -p "$R/usr/lib/debug/boot"
cp "$t/a.elf" "$R/usr/lib/debug/boot/vmlinux-$rel"
if run && [ "$(cat "$t/out")" = "$R/usr/lib/debug/boot/vmlinux-$rel" ]; then pass by_release
else bad by_release "$(cat "$t/out" "$t/err")"; fi

# Another kernel's vmlinux under that name is passed over ...
cp "$t/b.elf" "$R/usr/lib/debug/boot/vmlinux-$rel"
if run; then bad other_build_id "found $(cat "$t/out")"
elif grep -q "build id $idb, not the recording's" "$t/err"; then pass other_build_id
else bad other_build_id "$(cat "$t/err")"; fi

# ... for the build-id tree.
bt="$R/usr/lib/debug/.build-id/${ida:0:2}"
mkdir -p "$bt"
cp "$t/a.elf" "$bt/${ida:2}.debug"
if run && [ "$(cat "$t/out")" = "$bt/${ida:2}.debug" ]; then pass by_build_id
else bad by_build_id "$(cat "$t/out" "$t/err")"; fi
rm -rf "$R/usr/lib/debug/.build-id"

# debuginfod (elfutils' client), only when DEBUGINFOD_URLS is set: a local
# server with the webapi's /buildid/ID/debuginfo.
mkdir -p "$t/www/buildid/$ida"
cp "$t/a.elf" "$t/www/buildid/$ida/debuginfo"
python3 - "$t/www" "$t/port" <<'PY' 2>"$t/server.log" &
import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.HTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write(str(s.server_port))
s.timeout = 60
for _ in range(20):
    s.handle_request()
PY
server=$!
for _ in $(seq 50); do [ -s "$t/port" ] && break; sleep 0.1; done
if [ ! -s "$t/port" ]; then bad debuginfod "server did not start"
elif DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$t/port")" DEBUGINFOD_CACHE_PATH="$t/cache" \
     KJIT_DEBUG_ROOT="$R" "$probe" "$rel" "$ida" > "$t/out" 2> "$t/err" \
     && cmp -s "$(cat "$t/out")" "$t/a.elf"; then pass debuginfod "$(cat "$t/out")"
else bad debuginfod "$(cat "$t/out" "$t/err")"; fi

[ "$fail" = 0 ] && echo "debug-find: PASS" || echo "debug-find: FAIL"
exit "$fail"
