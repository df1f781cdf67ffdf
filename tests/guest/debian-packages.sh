#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages on a real Debian 12 system, as README.md's "Using
# kjit on a real machine" tells a user, its lines run verbatim (extracted
# here from between its guest.debian_packages markers), on a Debian 12
# root (tests/guest/debian-root.sh: systemd, dkms, build-essential, the
# pinned kernel's image and headers).  Natively, in throwaway copies of
# the root (what happens in userspace only):
#   build (tests/guest/debian-build.sh): the build lines, from the .dsc,
#     offline but apt-get;
#   the previous release (tests/guest/debian-previous.sh) installed by the
#     install line, packed into the image the boots start from;
#   this release installed, then a second kernel ABI's headers: DKMS
#     builds kjit.ko for it (tests/guest/debian-installs.sh).
# Then two boots of that image, both with KASLR on
# (tests/guest/debian-packages-guest.sh):
#   boot 1 (install): the previous kjit.ko loaded, the install line on the
#     built release: the upgrade, its message, the new kjitctl refusing
#     the old module, the reload it advises;
#   boot 2 (use): the same root rebooted into a new KASLR layout: first the
#     kjit-kcov unit boot 1 enabled (up at boot, a KCOV client's PCs,
#     stopped), then the other lines (modprobe, record, reports), lockdown,
#     then the purge, checked to leave nothing.
# The root's writes persist from boot 1 to boot 2 in a qcow2 overlay in a
# temporary directory; the cached root image is never written.
# Usage: tests/guest/debian-packages.sh [BUILD_DIR] [--prepare]
#   --prepare: only the host's part before the boots (packages, root image,
#   the native steps above, kernel, debug vmlinux), which ctest runs beside
#   other tests.
#   Packages: BUILD_DIR/packages (tools/package.sh, run here if missing).
#   Root image cached in BUILD_DIR/lab/debian-root; the debug vmlinux from
#   tools/lab/fetch-debug.sh.  Prints the time of each phase.
#   Env: KJIT_DEBIAN_TIMEOUT (seconds per boot, default 1500), KJIT_GUEST_CPU
#   (QEMU CPU model, default max: tools/lab/run-guest.sh --cpu).
# shellcheck source=tests/guest/host-preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-preamble.sh"
prepare_only=0; [ "${2:-}" != --prepare ] || prepare_only=1
# shellcheck source=tools/lab/abi.sh
. "$root/tools/lab/abi.sh"
# shellcheck source=tools/lab/qemu-lock.sh
. "$root/tools/lab/qemu-lock.sh"
verdict_begin debian_packages
t_start=$(date +%s)
phase() { echo "debian_packages: $1: $(( $(date +%s) - ${2:-$t_start} ))s"; }

pk="$B/packages"
# Packages of this tree: built again when the tree changed since.
t=$(date +%s); "$root/tools/package.sh" --if-stale "$B" >/dev/null; phase "packages of this tree" "$t"
dkms_deb="$(ls "$pk"/kjit-dkms_*.deb)" tools_deb="$(ls "$pk"/kjit_*.deb)"

# The guest has no network: the root holds every dependency of the two
# packages beforehand (dkms is in it anyway).
read -r -a deps <<< "$(dpkg-deb -f "$tools_deb" Depends | tr ',' '\n' | sed 's/[|(].*//; s/ //g' | grep . | sort -u | tr '\n' ' ')"
t=$(date +%s)
img="$("$root/tests/guest/debian-root.sh" "$KJIT_BUILD/debian-root" "${deps[@]}" | tail -n1)"
phase "root image (cached after the first run)" "$t"
kdir="$("$root/tools/lab/fetch-kernel.sh" "$KJIT_BUILD/kernel" | tail -n1)"
dbg="$("$root/tools/lab/fetch-debug.sh" | tail -n1)"
# README's lines between its guest.debian_packages: NAME markers.
readme_block() {
  awk -v want="$1" '
    /^<!-- guest.debian_packages: / { on = ($3 == want); fence = 0; next }
    on && /^```/ { if (fence) exit; fence = 1; next }
    on && fence { print }' "$root/README.md"
}

# README's build lines, verbatim, in a throwaway copy of the root: the
# binaries the guest installs are those they built from the .dsc.
readme_pk="$B/packages-readme"
mkdir -p "$readme_pk"
readme_block build > "$readme_pk/lines.txt"
readme_block install | grep '^apt-get install ' > "$readme_pk/install-line.txt" || true
[ -s "$readme_pk/lines.txt" ] || verdict_bad "README.md: no lines between the guest.debian_packages: build markers"
grep -q 'dpkg-buildpackage' "$readme_pk/lines.txt" || verdict_bad "README.md: the build lines run no dpkg-buildpackage"
grep -qx 'apt-get install ./kjit-dkms_\*.deb ./kjit_\*.deb' "$readme_pk/install-line.txt" \
  || verdict_bad "README.md: no 'apt-get install ./kjit-dkms_*.deb ./kjit_*.deb' between the install markers"
install_line="$(head -n 1 "$readme_pk/install-line.txt")"
root_stamp="$(cat "$(dirname "$img")/stamp")"
# cached WHAT DIR STAMP CMD...: CMD (its output kept in DIR/WHAT.out) when
# STAMP differs from the last run's; the last run's output otherwise.
cached() {
  local what="$1" dir="$2" stamp="$3" rc=0; shift 3
  if [ "$(cat "$dir/$what.stamp" 2>/dev/null)" = "$stamp" ] && [ -f "$dir/$what.out" ]; then
    cat "$dir/$what.out"; return 0
  fi
  rm -f "$dir/$what.stamp"
  "$@" > "$dir/$what.out" 2>&1 || rc=$?
  cat "$dir/$what.out"
  [ "$rc" != 0 ] || echo "$stamp" > "$dir/$what.stamp"
  return "$rc"
}
t=$(date +%s)
stamp="$(sha256sum <<< "$(cat "$pk/tree.sha256" "$readme_pk/lines.txt" "$root/tests/guest/debian-build.sh"; echo "$root_stamp")" | cut -c1-16)"
cached build "$readme_pk" "$stamp" "$root/tests/guest/debian-build.sh" "$(dirname "$img")/rootfs" "$pk" \
    "$readme_pk/lines.txt" "$readme_pk" | sed 's/^/debian_packages: README build line: status, seconds: /' ||
  verdict_bad "README's build lines did not build the packages in the root (tests/guest/debian-build.sh)"
phase "README's build lines in the root (cached while tree and root stay)" "$t"

# The release before this one, installed by README's install line in a
# copy of the root (DKMS builds its kjit.ko natively there), packed into
# the image the guest boots: the upgrade starts from it.
t=$(date +%s)
prev_pk="$B/packages-previous"
"$root/tests/guest/debian-previous.sh" "$pk" "$prev_pk" ||
  verdict_bad "the previous release for the upgrade did not build (tests/guest/debian-previous.sh)"
prev_img="$(dirname "$img")/root-previous.img"
stamp="$(sha256sum <<< "$(cat "$prev_pk/stamp" "$root/tests/guest/debian-installs.sh"; echo "$root_stamp $install_line")" | cut -c1-16)"
cached previous "$prev_pk" "$stamp" "$root/tests/guest/debian-installs.sh" "$(dirname "$img")/rootfs" "$ABI" \
    previous "$prev_pk" "$install_line" "$prev_img" | sed 's/^/debian_packages: previous release: /' ||
  verdict_bad "the previous release did not install in the root (tests/guest/debian-installs.sh previous)"
phase "the previous release, built and installed in a copy of the root (cached while the .dsc stays)" "$t"

# A second kernel ABI's headers after this release's install: DKMS builds
# for it.  The flavour's other Debian 12 6.1 ABI (the default's, or the
# one before it when the root runs the default).
flavour="$(sed -E 's/^[0-9.]+(-[0-9]+|\+deb[0-9]+)-//' <<< "$ABI")"
def_n="$(sed -E 's/^6\.1\.0-([0-9]+)-.*/\1/' <<< "$kjit_default_abi")"
abi2="${KJIT_DEBIAN_SECOND_ABI:-}"
for n in "$def_n" "$((def_n - 1))"; do
  [ -z "$abi2" ] && [ "6.1.0-$n-$flavour" != "$ABI" ] && abi2="6.1.0-$n-$flavour"
done
t=$(date +%s)
stamp="$(sha256sum <<< "$(cat "$readme_pk/build.stamp" "$root/tests/guest/debian-installs.sh"; echo "$root_stamp $abi2 $install_line")" | cut -c1-16)"
cached second-abi "$readme_pk" "$stamp" "$root/tests/guest/debian-installs.sh" "$(dirname "$img")/rootfs" "$ABI" \
    second-abi "$readme_pk" "$install_line" "$abi2" "$readme_pk" | sed 's/^/debian_packages: second ABI: /' ||
  verdict_bad "DKMS did not build kjit.ko for a second ABI's headers ($abi2; tests/guest/debian-installs.sh second-abi)"
phase "install and a second ABI's headers ($abi2) in a copy of the root (cached while the packages stay)" "$t"
if [ "$prepare_only" = 1 ]; then phase "prepared"; verdict_end; exit $?; fi

# One share disk per boot (each boot's results come back in its own
# directory): BOOT's guest script, guest-lib.sh, the README's lines.
shares="$B/guest-debian-packages"
rm -rf "$shares"; mkdir -p "$shares/install/debs" "$shares/use/debs"
new_share() {
  local boot="$1" share="$shares/$1"
  cp "$root/tests/guest/guest-lib.sh" "$root/tests/guest/debian-packages-guest.sh" "$share/"
  echo "exec sh ./debian-packages-guest.sh $boot" > "$share/run.sh"
}
t=$(date +%s)
new_share install; new_share use
# The install block: its apt-get install line in boot 1, the rest in boot 2.
readme_block install > "$shares/readme-install-block.txt"
grep '^apt-get install ' "$shares/readme-install-block.txt" > "$shares/install/readme-install.txt" || true
grep -v '^apt-get install ' "$shares/readme-install-block.txt" > "$shares/use/readme-use.txt" || true
readme_block remove > "$shares/use/readme-remove.txt"
grep -qx 'apt-get install ./kjit-dkms_\*.deb ./kjit_\*.deb' "$shares/install/readme-install.txt" \
  || verdict_bad "README.md: no 'apt-get install ./kjit-dkms_*.deb ./kjit_*.deb' between the install markers"
grep -qx 'modprobe kjit' "$shares/use/readme-use.txt" \
  || verdict_bad "README.md: no 'modprobe kjit' between the install markers"
grep -q '^apt-get purge' "$shares/use/readme-remove.txt" || verdict_bad "README.md: no apt-get purge between the remove markers"
# Boot 1: this release as README's build lines made it, over the
# previous one.
cp "$readme_pk"/kjit-dkms_*.deb "$readme_pk"/kjit_*.deb "$shares/install/debs/"
[ "$(dpkg-deb -f "$(ls "$readme_pk"/kjit-dkms_*.deb)" Version)" = "$(dpkg-deb -f "$dkms_deb" Version)" ] ||
  verdict_bad "README's build lines made another version than the .dsc's"
dpkg-deb -f "$(ls "$prev_pk"/kjit-dkms_*.deb)" Version | sed 's/-[^-]*$//' > "$shares/install/previous-version.txt"
ln "$dbg/vmlinux-dbg" "$shares/use/vmlinux-dbg" 2>/dev/null || cp "$dbg/vmlinux-dbg" "$shares/use/vmlinux-dbg"
# Boot 2's KCOV client (kjit-kcov.service) and the vmlinux's _text, which
# names its canonical PCs.
share_guest_bin "$B"
cp "$KJIT_GUEST_BIN/kcov_client" "$shares/use/"
nm "$dbg/vmlinux-dbg" | awk '$3 == "_text" {print "0x" $1}' > "$shares/use/link-text.txt"
for boot in install use; do
  used_kb="$(du -sk "$shares/$boot" | cut -f1)"
  rm -f "$shares/$boot.img"; truncate -s "$(( used_kb / 1024 + 256 ))M" "$shares/$boot.img"
  mkfs.ext4 -q -F -L kjit -E root_owner=0:0 -d "$shares/$boot" "$shares/$boot.img"
done
rm -f "$shares/use/vmlinux-dbg"
phase "kernel, debug vmlinux, share disks" "$t"

# The root: a qcow2 overlay over the cached image, so that what boot 1
# installs is there in boot 2; dropped with the temporary directory.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
qemu-img create -q -f qcow2 -b "$prev_img" -F raw "$tmp/root.qcow2"

# The initramfs Debian's initramfs-tools made in the image when it
# installed the kernel, as a machine boots: the generic and rt flavours
# build NVMe and ext4 as modules, which only it loads before the root is
# mounted.
initrd="$(dirname "$img")/rootfs/boot/initrd.img-$ABI"
[ -s "$initrd" ] || { echo "debian_packages: no $initrd (initramfs-tools in the image)" >&2; exit 1; }

# boot NAME ACCEL: one boot of the root with NAME's share disk, under the
# machine's QEMU lock.  KASLR on (Debian's default: no nokaslr), root on
# NVMe, -cpu max,-cx16 (or KJIT_GUEST_CPU's model, without CX16) as
# tools/lab/run-guest.sh says why.  Leaves the status in boot_rc and the
# share's files in $shares/NAME.
boot() {
  local name="$1" accel="$2" share="$shares/$1" out t
  local qemu=(qemu-system-x86_64 -accel "$accel" -cpu "${KJIT_GUEST_CPU:-max},-cx16" -smp 2 -m 2048
      -nographic -no-reboot -nic none -kernel "$kdir/vmlinuz" -initrd "$initrd"
      -append "root=/dev/nvme0n1 rw console=ttyS0 panic=-1 quiet sysrq_always_enabled"
      -drive "file=$tmp/root.qcow2,if=none,format=qcow2,id=root,cache=unsafe"
      -device "nvme,drive=root,serial=kjitroot"
      -drive "file=$share.img,if=none,format=raw,id=share,cache=unsafe"
      -device "nvme,drive=share,serial=kjit")
  boot_rc=0
  t=$(date +%s)
  qemu_lock_for "$accel"
  phase "$name: waiting for the machine's QEMU lock" "$t"
  t=$(date +%s)
  timeout -k 5 "${KJIT_DEBIAN_TIMEOUT:-1500}" "${qemu[@]}" </dev/null >"$share/console.log" 2>&1 || boot_rc=$?
  qemu_unlock
  phase "$name: guest boot to poweroff" "$t"
  out="$(mktemp -d)"
  debugfs -R "rdump / $out" "$share.img" >/dev/null 2>&1 || verdict_bad "could not read back the $name share image"
  cp -a "$out"/. "$share"/ 2>/dev/null; rm -rf "$out" "$share.img" "$share/vmlinux-dbg"
  if [ ! -f "$share/done" ]; then
    verdict_bad "the $name guest wrote no done (qemu status $boot_rc); the console's last lines:"
    tail -n 30 "$share/console.log" >&2
    boot_rc=125
  fi
  [ ! -f "$share/steps.txt" ] || sed "s/^/debian_packages: $name: README line: status /" "$share/steps.txt"
  [ ! -f "$share/times.txt" ] || sed "s/^/debian_packages: $name: guest time: /" "$share/times.txt"
}

# Boot 1 runs multi-threaded TCG, so that DKMS's parallel make uses both
# host cores (under single-threaded TCG it took 539 s where it takes 176).
# That is safe only because this boot patches no kernel text that another
# vCPU may be running: QEMU 7.2's multi-threaded TCG can re-execute a
# stale int3 after text_poke_bp (tools/lab/run-guest.sh), which kjit's
# attaching does on hot entry points.  kjit.ko is loaded here (the upgrade
# needs it loaded) but attaches nothing: its load and unload patch only
# the entries of its two kprobes, kallsyms_lookup_name (which nothing
# else in this boot calls) and __text_poke (run only under text_mutex, by
# the very poke that arms it); the guest checks it is unloaded at the end.
boot install "tcg,thread=multi"
VERDICT_LIST_CHECKS=1 verdict_boot "$shares/install" "$boot_rc" DEBIAN-PACKAGES-INSTALLED install
checks_list="$root/tests/guest/checks/debian_packages.list"
verdict_expect_checks "$shares/install" "$checks_list" install install
# Boot 2 loads kjit.ko and patches the kernel: single-threaded TCG.
if grep -q '^CHECK readme_block_readme-install PASS' "$shares/install/checks.txt" 2>/dev/null; then
  boot use "tcg,thread=single"
  # The whole log is judged: lockdown, rmmod and the purge make no error
  # line.  The guest's snapshot must hold them, so it was taken at the end.
  VERDICT_LIST_CHECKS=1 verdict_boot "$shares/use" "$boot_rc" DEBIAN-PACKAGES-DONE use
  dmesg_use="$shares/use/dmesg.txt"
  if ! grep -q 'kjit-test: lockdown' "$dmesg_use" 2>/dev/null ||
     ! sed -n '/kjit-test: lockdown/,$p' "$dmesg_use" | grep 'kjit: unloaded' > /dev/null; then
    verdict_bad "use: dmesg.txt was taken before lockdown and the purge's rmmod (its last line: $(tail -n 1 "$dmesg_use" 2>/dev/null))"
  fi
  grep -q 'kjit-test: lockdown' "$shares/use/console.log" ||
    verdict_bad "use: the console does not show the lockdown marker"
  verdict_expect_checks "$shares/use" "$checks_list" use use
  s1="$(cat "$shares/install/stext.txt" 2>/dev/null || true)"
  s2="$(cat "$shares/use/stext.txt" 2>/dev/null || true)"
  echo "debian_packages: _stext: install boot ${s1:-?}, use boot ${s2:-?}"
  [ "$s1" != "$s2" ] || echo "debian_packages: NOTE: both boots have the same _stext (KASLR chose the same slot)"
else
  verdict_bad "boot 2 (use) not run: the install did not pass in boot 1"
fi
phase total
verdict_end; exit $?
