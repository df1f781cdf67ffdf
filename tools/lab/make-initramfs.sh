#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the kjit guest initramfs (static busybox + /init).
# Usage: tools/lab/make-initramfs.sh OUTFILE [EXTRA_DIR] [KERNEL_IMAGE_DIR [FIX.ko...]]
#   EXTRA_DIR (optional, "" for none) is copied over the initramfs root.
#   KERNEL_IMAGE_DIR (optional): the unpacked linux-image .deb of the kernel
#   the initramfs boots (fetch-kernel.sh's OUTDIR/image), whose modules the
#   share needs when the flavour does not build them in.
#
# Guest protocol (see tools/lab/README.md):
#   The share is an ext4 image attached as an NVMe disk (serial "kjit").  The
#   cloud kernel has no 9p (CONFIG_NET_9P unset) but builds NVMe and ext4 in;
#   the generic and rt flavours build them as modules, so the initramfs
#   carries them (and crc32c for ext4's checksums) with their dependencies
#   from the flavour's own tree, and /init loads them in modules.dep order
#   (/lib/modules/load-order) before it looks for the disk.  /init mounts it at /mnt/kjit, runs
#   the script (kernel arg kjit.script=PATH, default /mnt/kjit/run.sh) with
#   cwd /mnt/kjit (init itself stays in /), logs to /mnt/kjit/guest.log and
#   the console, writes the exit status into /mnt/kjit/done, unmounts and
#   powers off.
#   kjit.shell=1 drops to an interactive shell instead of powering off.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 OUTFILE [EXTRA_DIR] [KERNEL_IMAGE_DIR [FIX.ko...]]" >&2; exit 2; }
OUTFILE="$1"; EXTRA="${2:-}"; IMAGE="${3:-}"
shift $(( $# < 3 ? $# : 3 ))
BUSYBOX=/bin/busybox
if ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked'; then
  echo "make-initramfs: $BUSYBOX is not static (apt-get install busybox-static)" >&2
  exit 1
fi

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,mnt/kjit,etc,root,lib/modules}
cp "$BUSYBOX" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
# Device nodes needed before devtmpfs is mounted (cpio as root keeps them).
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
mknod -m 666 "$root/dev/null" c 1 3 2>/dev/null || true
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"

cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
if [ -f /lib/modules/load-order ]; then
  while read -r m; do
    insmod "/lib/modules/$m" || echo "kjit-init: WARNING: insmod $m failed"
  done < /lib/modules/load-order
fi
for m in /lib/modules/fixes/*.ko; do
  [ -f "$m" ] || continue
  if insmod "$m"; then echo "kjit-init: lab kernel fix loaded: $(basename "$m" .ko)"
  else echo "kjit-init: WARNING: lab kernel fix $m failed to load"; fi
done
script=/mnt/kjit/run.sh
shell=0
for a in $(cat /proc/cmdline); do
  case "$a" in
    kjit.script=*) script="${a#kjit.script=}" ;;
    kjit.shell=1) shell=1 ;;
  esac
done
# Find the share disk: the NVMe namespace whose controller serial is "kjit".
dev=""
i=0
while [ $i -lt 100 ]; do
  for c in /sys/class/nvme/nvme*; do
    [ -e "$c/serial" ] || continue
    if [ "$(cat "$c/serial" | tr -d ' ')" = kjit ]; then
      n="$(basename "$c")n1"
      [ -b "/dev/$n" ] && dev="/dev/$n"
    fi
  done
  [ -n "$dev" ] && break
  sleep 0.1; i=$((i + 1))
done
if [ -n "$dev" ] && mount -t ext4 "$dev" /mnt/kjit; then
  echo "kjit-init: share $dev mounted at /mnt/kjit"
else
  echo "kjit-init: WARNING: no share disk found"
fi
# Where KASLR put the kernel this boot, for tools that read the console
# with the link-time symbols (guest-hang-dump.py).
awk '$3 == "_text" {print "kjit-init: _text 0x" $1}' /proc/kallsyms
# What the kernel chose against the CPU model's speculation bugs: it
# decides which return and indirect-branch thunks the text is patched with.
for v in /sys/devices/system/cpu/vulnerabilities/*; do
  [ -f "$v" ] && echo "kjit-init: vulnerability $(basename "$v"): $(cat "$v")"
done
if [ "$shell" = 1 ]; then
  setsid cttyhack sh
elif [ -f "$script" ]; then
  echo "kjit-init: running $script"
  # Only the script itself (and the tee) hold the share: a script may
  # unmount it (to unload ext4 on a flavour that builds it as a module)
  # after it redirected its output and stopped the tee, and mount it again.
  { (cd /mnt/kjit && exec sh "$script"); echo $? > /tmp/rc; } 2>&1 | tee /mnt/kjit/guest.log
  rc="$(cat /tmp/rc 2>/dev/null || echo 255)"
  echo "kjit-init: $script exited with $rc"
  echo "$rc" > /mnt/kjit/done
else
  echo "kjit-init: script $script not found"
fi
cd /
sync
umount /mnt/kjit 2>/dev/null || { sync; mount -o remount,ro /mnt/kjit; }
echo "kjit-init: poweroff"
poweroff -f
INIT
chmod 755 "$root/init"

if [ -n "$EXTRA" ]; then
  cp -a "$EXTRA"/. "$root"/
fi

# The share's modules the flavour does not build in, dependencies first.
if [ -n "$IMAGE" ]; then
  mods="$("$(dirname "${BASH_SOURCE[0]}")/image-modules.sh" "$IMAGE")"
  abi="$(ls "$mods")"
  [ "$(wc -w <<<"$abi")" = 1 ] || { echo "make-initramfs: $mods must hold one ABI" >&2; exit 1; }
  # depmod -b and modprobe -d read BASE/lib/modules only: a package with
  # its modules under usr/lib/modules gets a base that links them there.
  base="$IMAGE"
  if [ "$mods" != "$IMAGE/lib/modules" ]; then
    base="$root.base"; mkdir -p "$base/lib"; ln -s "$mods" "$base/lib/modules"
    trap 'rm -rf "$root" "$root.base"' EXIT
  fi
  [ -s "$mods/$abi/modules.dep" ] || depmod -b "$base" "$abi"
  : > "$root/lib/modules/load-order"
  for want in nvme ext4 crc32c_generic; do
    # modprobe prints "builtin NAME" for what the kernel has built in
    modprobe -d "$base" -S "$abi" --show-depends "$want" | while read -r kind path _; do
      [ "$kind" = insmod ] || continue
      # A flavour that compresses its modules (CONFIG_MODULE_COMPRESS_*)
      # ships foo.ko.xz: decompressed here, /init's insmod does not depend
      # on the decompressors busybox or the kernel were built with.
      name="$(basename "$path")"
      case "$name" in
        *.ko.xz) name="${name%.xz}" unpack=(xz -dc) ;;
        *.ko.zst) name="${name%.zst}" unpack=(zstd -qdc) ;;
        *.ko.gz) name="${name%.gz}" unpack=(gzip -dc) ;;
        *) unpack=() ;;
      esac
      grep -qxF "$name" "$root/lib/modules/load-order" && continue
      if [ ${#unpack[@]} = 0 ]; then cp "$path" "$root/lib/modules/$name"
      else "${unpack[@]}" "$path" > "$root/lib/modules/$name"; fi
      echo "$name" >> "$root/lib/modules/load-order"
    done
  done
  [ -s "$root/lib/modules/load-order" ] || rm "$root/lib/modules/load-order"
fi

# The lab's workarounds for the kernel's own bugs (kernel-fixes.sh).
if [ $# -gt 0 ]; then
  mkdir -p "$root/lib/modules/fixes"
  cp "$@" "$root/lib/modules/fixes/"
fi

mkdir -p "$(dirname "$OUTFILE")"
(cd "$root" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet) \
  | gzip -9 > "$OUTFILE.tmp.$$"
mv "$OUTFILE.tmp.$$" "$OUTFILE"
echo "$OUTFILE"
