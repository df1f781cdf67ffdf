#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/modules.sh,
# on a flavour that builds ext4 as a module (the share itself is ext4).
# Phase 1: kjitctl lists ext4's functions, records a read of an ext4 file
# with ext4_file_read_iter as the target, then attaches every ext4_*
# function with vfs_read* in the same request (the core ones by a direct
# call, the module ones by the ops) and reads again, so ext4 is attached
# and in the code cache.
# Phase 2 (this file again, from /tmp, "unload"): with its output moved off
# the share and init's tee stopped, unmounts the share and unloads ext4
# under those attachments; kjit must have detached them (the notifier's
# line), still work (a system call entered and counted), and the share is
# mounted again (ext4 reloaded) for the results; the vfs_read* attachments
# stay; then rmmod kjit.
set -u
step() { echo "== $*"; }

if [ "${1:-}" != unload ]; then
  # shellcheck source=tests/guest/guest-lib.sh
  . ./guest-lib.sh
  note_modules
  step insmod; insmod ./kjit.ko || { fail insmod; guest_done MODULES-GUEST-DONE; exit 1; }
  chk ext4_is_a_module grep -q '^ext4 ' /proc/modules
  step "list 'ext4_*'"
  $K list 'ext4_*' > list.txt 2> list.err
  chk list_ext4_file_read_iter grep -qx 'ext4_file_read_iter' list.txt
  n=$(grep -c '^ext4_' list.txt)
  if [ "$n" -ge 100 ]; then pass list_ext4_many "$n attachable"; else fail list_ext4_many "$n attachable"; fi
  cat list.err
  step "record a read of an ext4 file"
  echo 3 > /proc/sys/vm/drop_caches
  if $K record -t bbcount -e ext4_file_read_iter -o ext4.data -c 'cat data/ext4-file.txt' > record.out 2> record.err; then
    if cmp -s record.out data/ext4-file.txt; then pass record_ext4; else fail record_ext4 "output differs"; fi
  else
    fail record_ext4 "$(tr '\n' ' ' < record.err)"
  fi
  cat record.err
  # KCOV over module code: an openat of an ext4 file runs ext4_file_open
  # (f_op->open), in the ext4 module.  Its PCs are canonical as the
  # kernel's KCOV makes them (the KASLR offset removed, module PCs too):
  # moved back by this boot's offset (runtime _text - the vmlinux's,
  # link-text.txt) they fall in ext4's text, and kcov_client, which moves
  # kallsyms the same way, names them ext4's functions.
  step "KCOV over ext4: canonical module PCs"
  if $K kcov enable > kcov-enable.txt 2>&1; then
    link_text=$(cat link-text.txt)
    LINK_TEXT=$link_text ./kcov_client pc open data/ext4-file.txt > kcov-ext4.txt 2> kcov-ext4.err
    $K kcov disable >> kcov-enable.txt 2>&1 || fail kcov_disable "$(tail -n 1 kcov-enable.txt)"
    rt_text=$(awk '$3 == "_text" {print $1; exit}' /proc/kallsyms)
    read -r _ size _ _ _ base <<EOT
$(grep '^ext4 ' /proc/modules)
EOT
    off=$(( 0x$rt_text - link_text ))
    n=0 in_ext4=0 named=0 raw=0 eg=
    while read -r pc sym; do
      case "$pc" in 0x*) ;; *) continue ;; esac
      n=$((n + 1))
      d=$(( pc + off - base ))
      if [ "$d" -ge 0 ] && [ "$d" -lt "$size" ]; then
        in_ext4=$((in_ext4 + 1))
        case "$sym" in ext4_*) named=$((named + 1)); [ -n "$eg" ] || eg=$sym ;; esac
      fi
      d=$(( pc - base )); if [ "$d" -ge 0 ] && [ "$d" -lt "$size" ]; then raw=$((raw + 1)); fi
    done < kcov-ext4.txt
    if [ "$in_ext4" -gt 0 ] && [ "$named" = "$in_ext4" ]; then
      pass kcov_module_pcs "$in_ext4 of $n PCs in ext4 ($base), all in ext4_* functions, e.g. $eg"
    else
      fail kcov_module_pcs "$in_ext4 of $n PCs in ext4 ($base, offset $off), $named named ext4_*: $(head -c 200 kcov-ext4.err)"
    fi
    if [ "$off" != 0 ] && [ "$raw" = 0 ]; then pass kcov_module_pcs_canonical "offset $off"
    else fail kcov_module_pcs_canonical "offset $off, $raw PCs at run-time addresses"; fi
  else
    fail kcov_module_pcs "kjitctl kcov enable: $(tail -n 1 kcov-enable.txt)"
  fi
  step "attach 'ext4_*' 'vfs_read*' in one request, read through kjit"
  $K config --tool bbcount > /dev/null || fail config_bbcount
  if $K attach 'ext4_*' 'vfs_read*' > attach.txt 2>&1; then pass attach_ext4_glob "$(tail -n1 attach.txt)"; else fail attach_ext4_glob "$(tail -n1 attach.txt)"; fi
  echo 3 > /proc/sys/vm/drop_caches
  cat data/ext4-file.txt > /dev/null; ls -lR /mnt/kjit > /dev/null; sync
  $K stats > stats-ext4.txt
  # ext4's own code ran in the cache: blocks whose addresses lie in the
  # ext4 module (its base and size in /proc/modules), not just any block
  # (vfs_read*'s are the core kernel's).
  $K blocks > blocks-ext4.txt 2>&1
  # shellcheck disable=SC2016  # an awk program
  in_ext4='function lo32(s,  i, v) {v = 0; for (i = 11; i <= 18; i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v}
           NR == FNR {if ($1 == "ext4") {base = $6; size = $2}; next}
           base != "" && $1 ~ /^0x/ && $2 > 0 && substr($1, 1, 10) == substr(base, 1, 10) &&
             lo32($1) >= lo32(base) && lo32($1) - lo32(base) < size {n++; if (!eg) eg = $3}
           END {print n + 0, (eg ? eg : "-"), (base ? base : "-")}'
  read -r nb eg base <<EOT
$(awk "$in_ext4" /proc/modules blocks-ext4.txt)
EOT
  b=$(awk '$1=="blocks_built"{print $2}' stats-ext4.txt)
  if [ "$nb" -gt 0 ]; then pass ext4_in_cache "$nb blocks in ext4 ($base) ran, e.g. $eg; blocks_built $b"
  else fail ext4_in_cache "no block in ext4 ($base) among $(grep -c '^0x' blocks-ext4.txt) blocks; blocks_built ${b:-?}"; fi
  # the core half of the request is entered by a direct call, the module half by the ops
  o=$(awk '$1=="direct_ops"{print $2}' stats-ext4.txt)
  if [ "${o:-0}" -gt 0 ]; then pass core_half_direct "direct_ops $o"; else fail core_half_direct "direct_ops ${o:-?}"; fi
  $K list > attached-before.txt 2>/dev/null
  sync
  # Phase 2 from /tmp: exec closes this script's file on the share.
  cp run.sh guest-lib.sh kjitctl attached-before.txt /tmp/
  exec sh /tmp/run.sh unload
fi

# ---- phase 2: cwd and output off the share ----------------------------------
share=/mnt/kjit
dev=$(awk -v m=$share '$2 == m {print $1}' /proc/mounts)
cd /tmp || exit 1
exec > /tmp/unload.log 2>&1
# shellcheck source=tests/guest/guest-lib.sh
. /tmp/guest-lib.sh
K=/tmp/kjitctl
# init's tee writes guest.log on the share: stop it (its output is ours, now in /tmp)
for p in /proc/[0-9]*; do
  [ "$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null)" = "tee $share/guest.log " ] && kill "${p#/proc/}"
done
sleep 0.5
step "umount the share, rmmod ext4 under attachments"
sync
if umount $share; then pass umount_share; else fail umount_share "$(grep " $share " /proc/mounts)"; fi
if rmmod ext4; then pass rmmod_ext4; else fail rmmod_ext4; fi
chk ext4_gone sh -c '! grep -q "^ext4 " /proc/modules'
# every ext4 function detached (the notifier says how many), nothing else
e=$(grep -c ' ext4_' attached-before.txt)
dmesg | grep -E 'kjit: ext4 is going: detached [0-9]+' > going.txt
if grep -q "detached $e of its functions" going.txt; then pass detached_when_going "$e"
else fail detached_when_going "want $e: $(cat going.txt)"; fi
$K list 2>/dev/null | sort > attached-after.txt
grep -v ' ext4_' attached-before.txt | sort > attached-core.txt
if cmp -s attached-core.txt attached-after.txt; then pass only_core_left "$(wc -l < attached-after.txt) attached"
else fail only_core_left "$(tr '\n' ' ' < attached-after.txt)"; fi
n=$(grep -c ' vfs_read' attached-after.txt)
if [ "$n" -gt 0 ]; then pass core_still_attached "$n vfs_read*"; else fail core_still_attached "none"; fi
step "kjit still works"
$K attach __x64_sys_newuname > /dev/null || fail attach_after_unload
e0=$(stat_of entries)
i=0; while [ $i -lt 20 ]; do uname -a > /dev/null; i=$((i + 1)); done
e1=$(stat_of entries)
if [ "${e1:-0}" -gt "${e0:-0}" ]; then pass entries_after_unload "$e0 -> $e1"; else fail entries_after_unload "$e0 -> $e1"; fi
$K detach all > /dev/null || fail detach_after_unload
step "ext4 again, the share back"
if ! grep -q "^ext4 " /proc/modules; then
  insmod /lib/modules/ext4.ko || fail reload_ext4   # the initramfs' copy (make-initramfs.sh)
fi
if ! grep -q " $share " /proc/mounts; then
  mount -t ext4 "$dev" $share || { echo "MODULES-GUEST: cannot mount the share again"; exit 1; }
fi
cd $share || exit 1
cat /tmp/checks.txt >> checks.txt
cp /tmp/going.txt .
cat /tmp/unload.log >> guest.log
exec >> guest.log 2>&1
step rmmod kjit
chk rmmod_kjit rmmod kjit
guest_done MODULES-GUEST-DONE
