#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# syz-manager with the qemu VM type on the lab's kernel (the pinned cloud
# kernel, KASLR on), fuzzing the calls in manager-syscalls.txt, once with
# kjit's KCOV as syzkaller's coverage and once without (the baseline), each
# for DURATION minutes; then a table of corpus size, signal, coverage and
# executions per minute for both runs (syz-manager's -bench file, written
# every minute).
#
#   tests/syzkaller/manager.sh SYZ_BUILD [KJIT_BUILD] [--minutes N]
#       [--runs "cover nocover"] [--vms 2] [--procs 2]
#
# The VMs (make-root.sh): a Debian 12 root on an NVMe drive with sshd, DHCP
# on virtio-net and a unit that loads kjit.ko and runs `kjitctl kcov
# enable` before sshd. QEMU user networking only: syzkaller's qemu VM type
# itself passes `-netdev user,restrict=on,hostfwd=tcp:127.0.0.1:PORT-:22`
# and reaches the fuzzer through ssh's reverse forwarding; its web UI and
# RPC server listen on 127.0.0.1 only. One vCPU per VM, TCG.
# The runs:
#   cover     kjit loaded and enabled, `cover: true`: syzkaller's coverage
#             feedback comes from kjit.
#   nocover   the same image booted with kjit.syz=off (the unit does not
#             run), `cover: false`: what a user of the stock kernel has
#             without kjit. This is the honest baseline: the VM pays
#             nothing for kjit, and syzkaller falls back to its coverage-free
#             signal (one value per call and result).
#   nocover-kjit  kjit loaded and enabled, `cover: false`: isolates kjit's
#             cost on tasks that never enable coverage (not a baseline).
# The whole run holds every core's QEMU lock (tools/lab/qemu-lock.sh), so
# it never runs beside other guests.
# Results: KJIT_BUILD/syzkaller-manager/RUN/ (config, manager.log, bench.json,
# the workdir) and KJIT_BUILD/syzkaller-manager/summary.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
syz="$(cd "${1:?usage: manager.sh SYZ_BUILD [KJIT_BUILD] [--minutes N] [--runs LIST]}" && pwd)"; shift
B="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then B="$1"; shift; fi
B="$(cd "$B" && pwd)"
minutes=20 runs="cover nocover" vms=2 procs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --vms) vms="$2"; shift 2 ;;
    --procs) procs="$2"; shift 2 ;;
    *) echo "manager.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
lab="${KJIT_BUILD_LAB:-$B/lab}"
for f in "$syz/bin/syz-manager" "$syz/bin/linux_amd64/syz-fuzzer" "$syz/bin/linux_amd64/syz-executor" \
         "$B/module/kjit.ko" "$B/guest-bin/kjitctl"; do
  [ -f "$f" ] || { echo "manager.sh: $f missing" >&2; exit 2; }
done
kdir="$("$root/tools/lab/fetch-kernel.sh" "$lab/kernel" | tail -n1)"
kdeb="$(find "$kdir" -maxdepth 1 -name "linux-image-*.deb" | head -n1)"
out="${KJIT_SYZ_OUT:-$B/syzkaller-manager}"
mkdir -p "$out"
rootcache="${KJIT_SYZ_ROOT:-$out/root}"
img="$("$root/tests/syzkaller/make-root.sh" "$rootcache" "$B/module/kjit.ko" "$B/guest-bin/kjitctl" "$kdeb")"

# "a", "b", ... as a JSON list
calls="$(grep -v '^#' "$root/tests/syzkaller/manager-syscalls.txt" | grep . |
         sed 's/.*/"&"/' | paste -sd, -)"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

run_one() {
  local run="$1" cover cmdline dir
  case "$run" in
    cover) cover=true cmdline="" ;;
    nocover) cover=false cmdline=" kjit.syz=off" ;;
    nocover-kjit) cover=false cmdline="" ;;
    *) echo "manager.sh: unknown run $run" >&2; return 2 ;;
  esac
  dir="$out/$run"
  rm -rf "$dir"; mkdir -p "$dir/workdir"
  cat > "$dir/manager.cfg" <<EOC
{
  "name": "kjit-$run",
  "target": "linux/amd64",
  "http": "127.0.0.1:$(free_port)",
  "rpc": "127.0.0.1:0",
  "workdir": "$dir/workdir",
  "image": "$img",
  "sshkey": "$rootcache/id_rsa",
  "syzkaller": "$syz",
  "procs": $procs,
  "sandbox": "none",
  "cover": $cover,
  "reproduce": false,
  "enable_syscalls": [$calls],
  "type": "qemu",
  "vm": {
    "count": $vms,
    "cpu": 1,
    "mem": 1024,
    "kernel": "$kdir/vmlinuz",
    "cmdline": "root=/dev/nvme0n1 rw console=ttyS0 net.ifnames=0$cmdline",
    "image_device": "drive if=none,id=nvm,format=raw,file=",
    "network_device": "virtio-net-pci",
    "qemu_args": "-accel tcg -cpu max,-cx16 -device nvme,serial=syz,drive=nvm"
  }
}
EOC
  echo "manager.sh: $run: $minutes minutes, $vms VMs, log $dir/manager.log" >&2
  # SIGINT: syz-manager stops its VMs and exits; KILL a minute later if not.
  timeout -s INT -k 60 "$((minutes * 60))" "$syz/bin/syz-manager" -config "$dir/manager.cfg" \
    -bench "$dir/bench.json" > "$dir/manager.log" 2>&1 || true
}

# shellcheck source=tools/lab/qemu-lock.sh
. "$root/tools/lab/qemu-lock.sh"
qemu_lock_all
read -ra run_list <<< "$runs"
for run in "${run_list[@]}"; do run_one "$run"; done
qemu_unlock

"$root/tests/syzkaller/manager-summary.py" "$out" "${run_list[@]}" | tee "$out/summary.txt"
