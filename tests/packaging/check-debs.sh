#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ctest packaging.debs: the source package (its .dsc, what dpkg-source -x
# makes of it) and the two Debian packages built from it, inspected with
# dpkg-deb (built first by tools/package.sh --if-stale: again whenever the
# tree changed), and the DKMS tree built here exactly as dkms.conf's MAKE
# line says, against the installed headers of each flavour, with no network
# (unshare -n).
# Usage: tests/packaging/check-debs.sh BUILD_DIR
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
B="$(cd "$1" && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
fail=0
pass() { echo "PASS $1 ${2:-}"; }
bad() { echo "FAIL $1: ${2:-}"; fail=1; }
pk="$B/packages"
# Packages of this tree: built again when the tree changed since.
"$root/tools/package.sh" --if-stale "$B" >/dev/null || { echo "FAIL: tools/package.sh"; exit 1; }
dkms_deb="$(ls "$pk"/kjit-dkms_*.deb)" tools_deb="$(ls "$pk"/kjit_*.deb)"
version="$(dpkg-deb -f "$dkms_deb" Version)"
# DKMS knows the module by the upstream version (dh_dkms -V): its tree, its
# dkms.conf and KJIT_VERSION, which kjit.ko and kjitctl report.
upstream="${version%-*}"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
dpkg-deb -x "$dkms_deb" "$t/dkms"
dpkg-deb -x "$tools_deb" "$t/tools"
src="$t/dkms/usr/src/kjit-$upstream"

# The source package: a .dsc with the kjit orig tarball, the orig-zydis
# component (Debian's zydis orig tarball: tools/zydis-component.sh) and the
# debian tarball; dpkg-source -x of it gives the tree the binaries were
# built from, Zydis's source in zydis/.  Zydis is never in git.
dsc="$pk/kjit_$version.dsc"
if [ ! -f "$dsc" ]; then
  bad source_dsc "no $dsc"
else
  listed="$(sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]* [0-9]* //p' "$dsc" | sort | paste -sd' ')"
  missing=""
  for re in "kjit_$upstream\.orig\.tar\.[a-z0-9]+" "kjit_$upstream\.orig-zydis\.tar\.[a-z0-9]+" "kjit_$version\.debian\.tar\.[a-z0-9]+"; do
    grep -qE "(^| )$re( |$)" <<< "$listed" || missing="$missing $re"
  done
  if ! grep -qx 'Format: 3.0 (quilt)' "$dsc"; then bad source_dsc "not 3.0 (quilt): $(grep '^Format:' "$dsc")"
  elif [ -n "$missing" ]; then bad source_dsc "Files: $listed; missing:$missing"
  else pass source_dsc "$listed"; fi
fi
# dpkg-source -x checks every tarball against the .dsc's checksums.
zver=""
if [ -f "$dsc" ] && dpkg-source -x "$dsc" "$t/source" > "$t/source.log" 2>&1 &&
   [ -f "$t/source/zydis/src/Decoder.c" ] && [ -f "$t/source/zydis/include/Zydis/Zydis.h" ] &&
   zver="$(sed -n 's/^Version: //p' "$t/source/zydis/debian-source")" && [ -n "$zver" ]; then
  pass source_unpacks "zydis/ from Debian's zydis $zver"
else
  bad source_unpacks "no zydis/ with Zydis's source and its debian-source version: $(tail -n 3 "$t/source.log" 2>/dev/null | tr '\n' ' ')"
fi
# tools/package.sh built the binaries from that .dsc in a network namespace
# of its own (unshare -n): nothing in debian/rules reached the network.
if grep -qx 'package.sh: building from the .dsc without network (unshare -n)' "$pk/build.log" 2>/dev/null; then
  pass built_offline "dpkg-buildpackage -b under unshare -n"
else
  bad built_offline "$pk/build.log does not say the build ran without network"
fi
# kjit-dkms ships Zydis compiled from that component: Built-Using names it.
bu="$(dpkg-deb -f "$dkms_deb" Built-Using)"
if [ -n "$zver" ] && [ "$bu" = "zydis (= $zver)" ]; then
  pass built_using "kjit-dkms Built-Using: $bu"
else
  bad built_using "kjit-dkms Built-Using: '${bu}', the component's zydis: '${zver}'"
fi
if ! git -C "$root" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "NOTE zydis_not_in_git not run: $root is not a git tree"
elif tracked="$(git -C "$root" ls-files -- zydis)" && [ -z "$tracked" ]; then
  pass zydis_not_in_git
else
  bad zydis_not_in_git "tracked: $(head -n 3 <<< "$tracked" | tr '\n' ' ')"
fi

# kjit-dkms: the tree DKMS builds, its dkms.conf and maintainer scripts.
missing=""
for f in dkms.conf Kbuild Makefile conftest.sh conftest/ftrace_direct_ops.c kjit_engine.o_shipped zydis_kernel.o_shipped \
         include/uapi/kjit/ioctl.h include/kjit/engine.h examples/bbcount.c; do
  [ -f "$src/$f" ] || missing="$missing $f"
done
# Every object Kbuild links has its source (or its prebuilt object) there.
for o in $(sed -n 's/\\$//; /^kjit-y :=/,/^$/p' "$root/os/linux/Kbuild" | tr ' ' '\n' | grep -E '^[a-z_0-9/]+\.o$'); do
  b="${o%.o}"
  [ -f "$src/$b.c" ] || [ -f "$src/$b.S" ] || [ -f "$src/$b.o_shipped" ] || missing="$missing $b.{c,S}"
done
if [ -z "$missing" ]; then pass dkms_tree "/usr/src/kjit-$upstream"; else bad dkms_tree "missing:$missing"; fi
conf="$src/dkms.conf"
if grep -qx "PACKAGE_VERSION=\"$upstream\"" "$conf" && grep -qx 'BUILT_MODULE_NAME\[0\]="kjit"' "$conf" &&
   grep -qx 'DEST_MODULE_LOCATION\[0\]="/updates/dkms"' "$conf" && grep -qx 'AUTOINSTALL="yes"' "$conf"; then
  pass dkms_conf
else
  bad dkms_conf "$(grep -v '^#' "$conf" | tr '\n' ' ')"
fi
if grep -qE "^#define KJIT_VERSION \"$upstream\"" "$root/include/uapi/kjit/ioctl.h"; then
  pass module_version "KJIT_VERSION $upstream, the package's upstream version"
else
  bad module_version "KJIT_VERSION of include/uapi/kjit/ioctl.h is not $upstream (debian/changelog's $version)"
fi
# Nothing of the lab, and nothing that reaches the network.
if grep -rlE 'tools/lab|apt-get|https?://|wget|curl|fetch-' "$src" > "$t/refs"; then
  bad dkms_self_contained "$(tr '\n' ' ' < "$t/refs")"
else
  pass dkms_self_contained
fi
if "$root/cmake/check-freestanding.sh" "$src/kjit_engine.o_shipped" >/dev/null 2>&1 &&
   ! nm -u "$src/zydis_kernel.o_shipped" | awk '{print $2}' |
     grep -qvE '^(__x86_return_thunk|__x86_indirect_thunk_.*|memcpy|memset|memmove|memcmp)$'; then
  pass prebuilt_objects_freestanding
else
  bad prebuilt_objects_freestanding
fi
dpkg-deb -e "$dkms_deb" "$t/ctrl"
# shellcheck disable=SC2016  # the literal text of dh_dkms's prerm
if grep -q 'dkms remove -m $DKMS_NAME -v $DKMS_VERSION --all' "$t/ctrl/prerm" &&
   grep -q common.postinst "$t/ctrl/postinst" && dpkg-deb -f "$dkms_deb" Depends | grep -q dkms; then
  pass dkms_maintainer_scripts
else
  bad dkms_maintainer_scripts
fi

# kjit: the tools, the man pages, the docs; no kernel headers, QEMU or
# GoogleTest among its dependencies.
missing=""
for f in usr/bin/kjitctl usr/bin/kjit-report usr/bin/kjit-sim usr/share/man/man8/kjitctl.8.gz usr/share/man/man1/kjit-sim.1.gz usr/share/man/man1/kjit-report.1.gz \
         usr/share/doc/kjit/README.md.gz; do
  [ -e "$t/tools/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then pass tools_contents; else bad tools_contents "missing:$missing"; fi
# kjitctl speaks one module ABI: the two packages move together.  kjit-dkms
# needs kjit of its version; kjit breaks any other kjit-dkms (a machine that
# only reads recordings installs kjit alone).
v="$(dpkg-deb -f "$tools_deb" Version)"
if dpkg-deb -f "$dkms_deb" Depends | grep -qF "kjit (= $v)" &&
   [ "$(dpkg-deb -f "$tools_deb" Breaks | tr ',' '\n' | sed 's/^ *//' | sort | paste -sd,)" = "kjit-dkms (<< $v),kjit-dkms (>> $v)" ]; then
  pass versions_move_together "kjit-dkms Depends kjit (= $v); kjit Breaks other kjit-dkms"
else
  bad versions_move_together "kjit-dkms Depends: $(dpkg-deb -f "$dkms_deb" Depends); kjit Breaks: $(dpkg-deb -f "$tools_deb" Breaks)"
fi
deps="$(dpkg-deb -f "$tools_deb" Depends)"
if echo "$deps" | grep -qE 'linux-headers|qemu|gtest|googletest'; then bad tools_depends "$deps"; else pass tools_depends "$deps"; fi
# The tools-only build (KJIT_TOOLS_ONLY) neither asks for nor looks for them.
bdeps="$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$root/debian/control")"
if echo "$bdeps" | grep -qE 'linux-headers|qemu|gtest|googletest'; then bad build_depends "$bdeps"
elif [ -f "$pk/build.log" ] && grep -qiE 'gtest|googletest' "$pk/build.log"; then bad build_depends "the package build looked for GoogleTest"
else pass build_depends; fi
if "$t/tools/usr/bin/kjitctl" --help 2>&1 | grep 'kjitctl record' >/dev/null &&
   "$t/tools/usr/bin/kjit-report" --help | grep 'usr/lib/debug/.build-id' >/dev/null; then
  pass tools_run
else
  bad tools_run
fi

# kjit-kcov.service: where systemd finds a package's units, with the keys
# that make it what docs/kjitctl.8 says; neither enabled nor started by the
# maintainer scripts (a fuzzing machine opts in), stopped on remove,
# disabled on purge; its
# options a conffile.  systemd-analyze verify (when the host has it) with
# the package's kjitctl for /usr/bin/kjitctl, which the host lacks: any
# warning fails too.
unit="$t/tools/lib/systemd/system/kjit-kcov.service"
if [ -f "$unit" ]; then pass unit_in_package /lib/systemd/system/kjit-kcov.service
else bad unit_in_package "no lib/systemd/system/kjit-kcov.service in $(basename "$tools_deb")"; fi
missing=""
# shellcheck disable=SC2016  # the unit's literal $KJIT_KCOV_OPTS
for k in '^\[Unit\]$' '^\[Service\]$' '^\[Install\]$' '^Type=oneshot$' '^RemainAfterExit=yes$' \
         '^Before=.*ssh\.service' '^EnvironmentFile=-/etc/default/kjit-kcov$' '^ExecStart=/sbin/modprobe kjit$' \
         '^ExecStart=/usr/bin/kjitctl kcov enable \$KJIT_KCOV_OPTS$' '^ExecStop=/usr/bin/kjitctl kcov disable$' \
         '^WantedBy=multi-user\.target$'; do
  grep -qE "$k" "$unit" 2>/dev/null || missing="$missing $k"
done
if [ -z "$missing" ]; then pass unit_keys; else bad unit_keys "missing:$missing"; fi
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$t/unit"
  sed "s|/usr/bin/kjitctl|$t/tools/usr/bin/kjitctl|" "$unit" > "$t/unit/kjit-kcov.service" 2>/dev/null
  if out="$(systemd-analyze verify --man=no "$t/unit/kjit-kcov.service" 2>&1)" && [ -z "$out" ]; then
    pass unit_verify "systemd-analyze verify"
  else
    bad unit_verify "$(tr '\n' ' ' <<< "$out")"
  fi
else
  echo "NOTE unit_verify not run: no systemd-analyze on this host (unit_keys checked the keys)"
fi
dpkg-deb -e "$tools_deb" "$t/tools-ctrl"
# debhelper's --no-enable snippet enables the unit again on upgrade only
# when the admin had (debian-installed, was-enabled); nothing starts it.
ctl="$t/tools-ctrl"
if grep -q "deb-systemd-helper debian-installed 'kjit-kcov.service'" "$ctl/postinst" 2>/dev/null &&
   ! grep -q 'deb-systemd-invoke' "$ctl/postinst" 2>/dev/null &&
   grep -q 'deb-systemd-helper purge .kjit-kcov.service' "$ctl/postrm" 2>/dev/null; then
  pass unit_not_enabled_on_install
else
  bad unit_not_enabled_on_install "$(cat "$ctl/postinst" "$ctl/postrm" 2>/dev/null | grep -E 'systemd' | tr '\n' ' ')"
fi
if grep -q 'deb-systemd-invoke stop kjit-kcov.service' "$ctl/prerm" 2>/dev/null &&
   sh -n "$ctl/prerm"; then
  pass unit_stopped_on_remove
else
  bad unit_stopped_on_remove "no stop of kjit-kcov.service in prerm"
fi
if [ -f "$t/tools/etc/default/kjit-kcov" ] && grep -qx /etc/default/kjit-kcov "$ctl/conffiles" 2>/dev/null &&
   grep -qx 'KJIT_KCOV_OPTS=""' "$t/tools/etc/default/kjit-kcov"; then
  pass unit_options_conffile /etc/default/kjit-kcov
else
  bad unit_options_conffile "etc/default/kjit-kcov missing, not a conffile or without KJIT_KCOV_OPTS"
fi

# The build DKMS runs for each kernel with headers (dkms.conf's
# BUILD_EXCLUSIVE_CONFIG, then its MAKE with kernel_source_dir), offline:
# the pinned kernel, the other flavours (tools/kernel-flavours) and the
# other kernel lines (tools/kernel-lines: 6.12), whose headers
# tools/lab/deps.sh installs.
mk="$(sed -n 's/^MAKE\[0\]="\(.*\)"$/\1/p' "$conf")"
excl="$(sed -n 's/^BUILD_EXCLUSIVE_CONFIG="\(.*\)"$/\1/p' "$conf")"
for abi in $( (echo "$ABI"; cat "$root/tools/kernel-flavours" "$root/tools/kernel-lines") | sort -u); do
  kdir="/usr/src/linux-headers-$abi"
  if [ ! -f "$kdir/.config" ]; then bad "dkms_make_offline_$abi" "$kdir missing (tools/lab/deps.sh installs it)"; continue; fi
  unmet=""
  for c in $excl; do
    case "$c" in
      !*) ! grep -qE "^${c#!}=[ym]" "$kdir/.config" || unmet="$unmet $c" ;;
      *) grep -qE "^$c=[ym]" "$kdir/.config" || unmet="$unmet $c" ;;
    esac
  done
  [ -z "$unmet" ] || { bad "dkms_make_offline_$abi" "BUILD_EXCLUSIVE_CONFIG excludes it:$unmet"; continue; }
  rm -rf "$t/build"; cp -a "$src" "$t/build"
  start=$(date +%s)
  if (cd "$t/build" && kernel_source_dir="$kdir" unshare -n sh -c "eval \"$mk\"" > "$t/make.log" 2>&1) &&
     [ "$(modinfo -F vermagic "$t/build/kjit.ko" | cut -d' ' -f1)" = "$abi" ]; then
    pass "dkms_make_offline_$abi" "kjit.ko in $(( $(date +%s) - start ))s"
  else
    bad "dkms_make_offline_$abi" "$(tail -n 5 "$t/make.log" | tr '\n' ' ')"
  fi
done
# A kernel kjit cannot run on is refused by the build with the reason:
# the pinned kernel's headers with ftrace's direct calls taken out of its
# config (the conftest reads the config before it compiles anything).
fake="$t/headers-no-direct"
mkdir -p "$fake"
grep -v '^CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=' "/usr/src/linux-headers-$ABI/.config" > "$fake/.config"
rm -rf "$t/build"; cp -a "$src" "$t/build"
if (cd "$t/build" && kernel_source_dir="$fake" unshare -n sh -c "eval \"$mk\"" > "$t/make.log" 2>&1); then
  bad dkms_refuses_unsupported "the build went on without CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS"
elif grep -q 'lacks CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS, which kjit.ko needs' "$t/make.log"; then
  pass dkms_refuses_unsupported "$(grep -m1 'lacks CONFIG' "$t/make.log")"
else
  bad dkms_refuses_unsupported "failed without naming the option: $(tail -n 3 "$t/make.log" | tr '\n' ' ')"
fi
# lintian on the build (.changes: both packages and the buildinfo) and on
# the source package (.dsc): no error or warning left, but the ones
# debian/*.lintian-overrides explain.
if ! command -v lintian > /dev/null; then
  bad lintian "lintian is not installed (tools/lab/deps.sh installs it)"
elif lintian --tag-display-limit 0 --fail-on error,warning "$pk"/kjit_*.changes "$dsc" > "$t/lintian.txt" 2>&1; then
  pass lintian "$(grep -c '' "$t/lintian.txt") lines, none an error or a warning; overrides: $(cat "$root"/debian/*.lintian-overrides | grep -c '^[a-z]')"
else
  bad lintian "$(grep -E '^[EW]: ' "$t/lintian.txt" | tr '\n' ';' | cut -c1-600)"
fi
[ "$fail" = 0 ] && echo "check-debs: PASS" || echo "check-debs: FAIL"
exit "$fail"
