#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The KCOV anchor kernel (issue 61): the lab's Debian kernel rebuilt from
# its own Debian source and config with CONFIG_KCOV=y and
# CONFIG_KCOV_ENABLE_COMPARISONS=y and nothing else, so that the compiler's
# coverage (trace-pc, trace-cmp) can be measured against kjit's.  Its
# release is the Debian ABI plus "+kcov" (6.1.0-57-cloud-amd64+kcov), and
# it is a lab ABI like the others: with KJIT_KERNEL=that, run-guest.sh and
# bench/lib/boot.sh boot it and os/linux/build.sh builds kjit.ko against
# it, all in the lab cache kjit-lab gives that ABI (build-ABI/lab), where
# this script leaves the kernel as fetch-kernel.sh and fetch-debug.sh leave
# Debian's.
#
# The whole kernel and its modules, with Debian's debug info: hours on 2
# cores, once.  Resumable (a re-run continues make where it stopped) and
# idempotent (a finished build is not redone); make runs under nice -n 19
# and the lowest best-effort I/O priority, -j$(nproc).
#   LAB/kcov-kernel/debian/      Debian's image of the ABI (fetch-kernel.sh):
#                                its config, and the version of its source
#   LAB/kcov-kernel/src/         that source (fetch-source.sh)
#   LAB/kcov-kernel/build/       the build tree (O=), also the headers (KDIR)
#   LAB/kcov-kernel/config.diff  Debian's config against the one built
#   LAB/kcov-kernel/build.log    make's output
#   LAB/kernel/                  vmlinuz, config, vmlinux,
#                                image/lib/modules/ABI+kcov/ (modules_install)
#   LAB/debug/                   vmlinux-dbg (the build's vmlinux), linux-source
#
# Usage: tools/lab/kcov-kernel.sh [--config-only]   (prints LAB/kernel)
#   --config-only: fetch, configure, check and print the config's diff; no build.
# Env: KJIT_KERNEL (the Debian ABI, with or without "+kcov"; default
#   tools/kernel-version), KJIT_BUILD (LAB; default ./build-ABI+kcov/lab),
#   KJIT_KCOV_MIN_FREE_GB (15: make does not start with less space free; the
#   build tree takes some 10 GB, an estimate, and a full disk would stop the
#   lab's other jobs too).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=tools/lab/abi.sh
. "$here/abi.sh"
case "$ABI" in *+kcov) ;; *) exec env KJIT_KERNEL="$ABI+kcov" "$0" "$@" ;; esac
config_only=0
case "${1:-}" in --config-only) config_only=1 ;; "") ;; *) echo "usage: $0 [--config-only]" >&2; exit 2 ;; esac
REL="$ABI" BASE="${ABI%+kcov}"
LAB="${KJIT_BUILD:-$repo/build-$REL/lab}"
W="$LAB/kcov-kernel" src="$LAB/kcov-kernel/src" obj="$LAB/kcov-kernel/build"
fail() { echo "kcov-kernel: $*" >&2; exit 1; }

# linux-source carries Debian's patches but no featureset's: the rt
# flavour's tree is not in it.
case "$BASE" in *-rt-*) fail "$BASE is built from the PREEMPT_RT featureset, which linux-source lacks" ;; esac
# Where the kernel lands is where fetch-kernel.sh puts the ABI's image: a
# lab cache that holds another kernel's is somebody else's.
if mods="$("$here/image-modules.sh" "$LAB/kernel/image" 2>/dev/null)" &&
   held="$(find "$mods" -mindepth 1 -maxdepth 1 -printf '%f ')" && [ "$held" != "$REL " ]; then
  fail "$LAB/kernel holds ${held% }: KJIT_BUILD is another kernel's lab cache; $REL needs its own (default build-$REL/lab)"
fi
mkdir -p "$W"
exec 9>"$W/lock"
flock -n 9 || fail "another kcov-kernel.sh is working in $W"

# 1. Debian's image of the ABI: its config, and which upload its source is.
KJIT_KERNEL="$BASE" "$here/fetch-kernel.sh" "$W/debian" >/dev/null
deb="$(find "$W/debian" -maxdepth 1 -name "linux-image-${BASE}_*.deb" | head -n1)"
debcfg="$W/debian/config"
"$here/fetch-source.sh" "$deb" "$src" >/dev/null

# 2. Debian's compiler, as the config names it (CONFIG_CC_VERSION_TEXT):
# another would change the CC_* symbols and the code.
cc_text="$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$debcfg")"
cc="${cc_text%% *}"
have="$("$cc" --version 2>/dev/null | sed -n 1p)" || true
[ "$have" = "$cc_text" ] || fail "Debian built $BASE with '$cc_text'; this host's $cc is '${have:-missing}'"
missing=()
for t in make flex bison bc openssl pahole lz4 depmod python3 perl; do command -v "$t" >/dev/null || missing+=("$t"); done
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
[ -f /usr/include/gelf.h ] || missing+=(libelf-dev)
[ ${#missing[@]} = 0 ] || fail "missing: ${missing[*]} (tools/lab/deps.sh installs them)"

# 3. The build tree.  A tree configured from another upload's source is
# dropped.  .kernelvariables is how Debian's own build and headers set the
# release and the compiler (its Makefile includes it): KERNELRELEASE names
# the kernel (uname -r, /lib/modules/REL, every module's vermagic) without
# touching CONFIG_LOCALVERSION, and a module built against this tree gets
# the same (os/linux/build.sh with KDIR=the tree).
if [ "$(cat "$obj/.kjit-source" 2>/dev/null)" != "$(cat "$src/.kjit-source")" ]; then
  rm -rf "$obj" "$W/built" "$W/staged"
  mkdir -p "$obj"
  cp "$src/.kjit-source" "$obj/.kjit-source"
fi
printf 'override ARCH = x86\noverride KERNELRELEASE = %s\nCC = %s\n' "$REL" "$cc" > "$W/kernelvariables"
cmp -s "$W/kernelvariables" "$obj/.kernelvariables" || cp "$W/kernelvariables" "$obj/.kernelvariables"
kmake() { ionice -c 2 -n 7 nice -n 19 make -C "$src" O="$obj" "$@"; }
# olddefconfig on a copy (KCONFIG_CONFIG): the tree's .config is replaced
# only when it changes, so make's dependencies see no change on a re-run.
olddefconfig() { KCONFIG_CONFIG="$1" kmake -s olddefconfig >/dev/null; }
diffconfig() { python3 "$src/scripts/diffconfig" "$1" "$2"; }
# The symbols of a diffconfig: "-SYM v", "+SYM v", " SYM old -> new".
changed() { diffconfig "$1" "$2" | awk '{ s = $1; sub(/^[-+]/, "", s); print s }' | sort -u; }

# 3a. Debian's config, as Kconfig and this toolchain read it.  Debian's
# /boot copy leaves out four lines of its build's own config (the headers'
# .config has them), each set here as a rebuild must: BUILD_SALT (Debian
# salts build ids with the release), MODULE_SIG_ALL (modules are signed at
# modules_install), MODULE_SIG_KEY (Debian's points at its build's key,
# which is not here: the default certs/signing_key.pem makes Kbuild
# generate an ephemeral key, whose certificate the kernel trusts, so the
# kernel's own modules load signed; module signatures stay not enforced,
# MODULE_SIG_FORCE unset as Debian has it, so kjit.ko loads unsigned as
# on Debian's kernel) and SYSTEM_TRUSTED_KEYS (none besides it).  Any
# other change means the source or the toolchain is not Debian's: refuse.
cfg() { "$src/scripts/config" --file "$@"; }
cp "$debcfg" "$W/debian.config"
cfg "$W/debian.config" --set-str BUILD_SALT "$REL" --enable MODULE_SIG_ALL \
  --set-str MODULE_SIG_KEY certs/signing_key.pem --set-str SYSTEM_TRUSTED_KEYS ""
olddefconfig "$W/debian.config"
unexpected="$(changed "$debcfg" "$W/debian.config" | grep -vxE 'BUILD_SALT|MODULE_SIG_ALL|MODULE_SIG_KEY|SYSTEM_TRUSTED_KEYS' || true)"
[ -z "$unexpected" ] || { diffconfig "$debcfg" "$W/debian.config" >&2
  fail "Kconfig does not reproduce Debian's config here (above): $(echo "$unexpected" | tr '\n' ' ')"; }

# 3b. Plus KCOV and its comparisons (KCOV_INSTRUMENT_ALL and the IRQ area
# at their defaults).  What may change with them: the KCOV* symbols and
# what Kconfig ties to them, the symbols KCOV selects and every config
# whose dependencies name a KCOV symbol (6.1: DEBUG_FS, OBJTOOL,
# GCC_PLUGIN_SANCOV, TEST_FPU, um's GCOV), read from the tree's Kconfig files.
cp "$W/debian.config" "$W/kcov.config"
cfg "$W/kcov.config" --enable KCOV --enable KCOV_ENABLE_COMPARISONS
olddefconfig "$W/kcov.config"
mapfile -d '' kconfigs < <(find "$src" -name 'Kconfig*' -print0)
tied="$(awk '
  FNR == 1 { sym = ""; help = 0 }
  /^(menu)?config[ \t]/ { sym = $2; help = 0; if (sym ~ /^KCOV/) print sym; next }
  /^[ \t]+(help|---help---)[ \t]*$/ { help = 1; next }
  help && /^[^ \t]/ { help = 0 }
  help { next }
  sym == "KCOV" && $1 == "select" { print $2 }
  sym != "" && /(^|[^A-Za-z0-9_])KCOV/ { print sym }' "${kconfigs[@]}" | sort -u)"
unexpected="$(changed "$W/debian.config" "$W/kcov.config" | grep -vxF -f <(echo "$tied") || true)"
[ -z "$unexpected" ] || fail "KCOV changed symbols Kconfig does not tie to it: $(echo "$unexpected" | tr '\n' ' ')"
for s in KCOV KCOV_ENABLE_COMPARISONS KCOV_INSTRUMENT_ALL; do
  grep -qx "CONFIG_$s=y" "$W/kcov.config" || fail "CONFIG_$s=y did not hold (olddefconfig dropped it)"
done
{ echo "# scripts/diffconfig of Debian's config-$BASE (linux-image) against $REL's .config"
  echo "# ($(cat "$src/.kjit-source"), $cc_text)"
  diffconfig "$debcfg" "$W/kcov.config"; } > "$W/config.diff"
cat "$W/config.diff" >&2
cmp -s "$W/kcov.config" "$obj/.config" || cp "$W/kcov.config" "$obj/.config"
[ "$config_only" = 0 ] || { echo "kcov-kernel: configured $obj (--config-only: not built)" >&2; exit 0; }

# 4. Build.  The key names what was built: a finished build of the same
# source, release, compiler and config is not redone.
key="$(cat "$src/.kjit-source" "$obj/.kernelvariables" "$obj/.config" | sha256sum | cut -c1-16)"
if [ "$(cat "$W/built" 2>/dev/null)" != "$key" ]; then
  rm -f "$W/built" "$W/staged"
  free_gb=$(( $(df -Pk "$W" | awk 'NR == 2 {print $4}') / 1048576 ))
  [ "$free_gb" -ge "${KJIT_KCOV_MIN_FREE_GB:-15}" ] \
    || fail "$free_gb GB free on $W's disk, under ${KJIT_KCOV_MIN_FREE_GB:-15} GB (KJIT_KCOV_MIN_FREE_GB)"
  echo "kcov-kernel: building $REL, -j$(nproc), hours (a re-run continues): $W/build.log" >&2
  echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) make bzImage modules" >> "$W/build.log"
  kmake -j"$(nproc)" bzImage modules >> "$W/build.log" 2>&1 \
    || { tail -n 30 "$W/build.log" >&2; fail "make failed (whole log: $W/build.log); a re-run continues"; }
  # The compiler's callbacks are there: ksys_read, kcov.rst's example.
  calls="$(nm -u "$obj/fs/read_write.o")"
  if ! grep -q ' __sanitizer_cov_trace_pc$' <<<"$calls" || ! grep -q ' __sanitizer_cov_trace_cmp' <<<"$calls"; then
    fail "$obj/fs/read_write.o calls no __sanitizer_cov_trace_pc or _cmp*: not instrumented"
  fi
  echo "$key" > "$W/built"
fi

# 5. Into the lab cache as fetch-kernel.sh and fetch-debug.sh leave a
# Debian kernel: the guests' initramfs takes its modules from image/
# (make-initramfs.sh), the hang dump and kjitctl report the debug vmlinux.
if [ "$(cat "$W/staged" 2>/dev/null)" != "$key" ]; then
  k="$LAB/kernel.tmp"
  rm -rf "$k"; mkdir -p "$k/image"
  # Stripped as Debian's are (their debug info is in the build tree), then
  # signed with the ephemeral key (MODULE_SIG_ALL); depmod writes modules.dep.
  kmake INSTALL_MOD_PATH="$k/image" INSTALL_MOD_STRIP=1 modules_install >> "$W/build.log" 2>&1 \
    || { tail -n 30 "$W/build.log" >&2; fail "modules_install failed ($W/build.log)"; }
  cp "$obj/arch/x86/boot/bzImage" "$k/vmlinuz"
  cp "$obj/.config" "$k/config"
  ln -s "$obj/vmlinux" "$k/vmlinux"
  rm -rf "$LAB/kernel"; mv "$k" "$LAB/kernel"
  mkdir -p "$LAB/debug"
  rm -rf "$LAB/debug/vmlinux-dbg" "$LAB/debug/linux-source" "$LAB/debug/modules"
  ln -s "$obj/vmlinux" "$LAB/debug/vmlinux-dbg"
  ln -s "$src" "$LAB/debug/linux-source"
  echo "$REL" > "$LAB/debug/abi"
  echo "$key" > "$W/staged"
fi
echo "kcov-kernel: $REL in $LAB (KJIT_KERNEL=$REL KJIT_BUILD=$LAB; KDIR $obj)" >&2
echo "$LAB/kernel"
