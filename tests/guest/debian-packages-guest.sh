#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest half of tests/guest/debian-packages.sh, run by systemd at each boot
# of a full Debian 12 root (cwd = the share), as
# `sh debian-packages-guest.sh install|use`: README.md's real-machine lines,
# verbatim and one by one, with what each should have left checked in
# between; the debug vmlinux is where linux-image-$(uname -r)-dbg puts it.
#   install (boot 1): the root holds the release before this one (built
#            by tests/guest/debian-previous.sh, installed by the host in a
#            copy of the root).  Its kjit.ko loaded, readme-install.txt, the
#            apt-get install line, in debs/ (this release, as README's build
#            lines made it): the upgrade, its message, the new kjitctl's
#            refusal of the old module, `rmmod kjit && modprobe kjit`.  Ends
#            with nothing of kjit loaded (see the host script).
#            Enables kjit-kcov.service (not enabled by the install).
#   use (boot 2, the same root rebooted): first the kjit-kcov unit (up at
#            boot, a KCOV client, stopped), then readme-use.txt (modprobe, record,
#            reports), then lockdown (integrity) switched on at run time,
#            the same policy as lockdown=integrity on the command line for
#            everything that follows, then readme-remove.txt (the purge).
# Writes checks.txt, steps.txt (each README line: status, seconds),
# times.txt (phases), stext.txt (this boot's _stext), out/ (the reports),
# dmesg.txt, tainted.txt.
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
stage=$1
S=$PWD
mkdir -p out
now() { cut -d' ' -f1 /proc/uptime; }
echo "uptime_at_start $(now)" > times.txt

# The README's lines, each run by sh as a user would type it, in the
# directory holding the packages, their output appended to out/RB_LOG
# (default readme.log); stops at the first that fails.
run_block() {
  rb_file=$1 rb_log="$S/out/${RB_LOG:-readme.log}"
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    t0=$(now)
    (cd "$S/debs" && sh -c "$line") >> "$rb_log" 2>&1
    rc=$?
    t1=$(now)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    echo "$rc $secs $line" >> "$S/steps.txt"
    echo "\$ $line  [status $rc, ${secs}s]" >> "$rb_log"
    if [ "$rc" != 0 ]; then fail "readme: $line" "status $rc"; return 1; fi
  done < "$rb_file"
  pass "readme_block_$(basename "$rb_file" .txt)"
}

rel=$(uname -r)
chk kaslr_on sh -c '! grep -qw nokaslr /proc/cmdline'
stext=$(awk '$3 == "_stext" {print $1}' /proc/kallsyms)
echo "$stext" > stext.txt
if [ -n "$stext" ] && [ "$stext" != ffffffff81000000 ] && [ "$stext" != 0000000000000000 ]; then
  pass kaslr_slide "_stext at $stext"
else
  fail kaslr_slide "_stext at ${stext:-?}"
fi

case "$stage" in
install)
  # The previous release, installed in this root before it booted
  # (tests/guest/debian-installs.sh previous): its kjit.ko loads.
  prev=$(cat previous-version.txt)
  dkms status > out/dkms-status-previous.txt 2>&1
  chk previous_dkms_installed grep -q "^kjit/$prev, $rel, x86_64: installed" out/dkms-status-previous.txt
  chk previous_loaded sh -c "modprobe kjit && grep -qx '$prev' /sys/module/kjit/version"
  chk previous_kjitctl_talks sh -c 'kjitctl stats > out/previous-stats.txt 2>&1'
  # The upgrade, with the previous kjit.ko loaded: the same line in debs/.
  if RB_LOG=upgrade.log run_block readme-install.txt; then
    dkms status > out/dkms-status.txt 2>&1
    chk dkms_installed grep -q "^kjit/.*, $rel, x86_64: installed" out/dkms-status.txt
    chk upgrade_replaced_previous sh -c "! grep -q '^kjit/$prev' out/dkms-status.txt"
    chk upgrade_message grep -q "kjit-dkms: the loaded kjit.ko ($prev) is not the one just installed (.*) for $rel; load it with: rmmod kjit && modprobe kjit" out/upgrade.log
    # The new kjitctl and the old module: refused, with what to do.
    if kjitctl stats > out/mismatch.txt 2>&1; then
      fail kjitctl_refuses_previous_module "kjitctl stats succeeded against kjit.ko $prev"
    else
      chk kjitctl_refuses_previous_module grep -q "kjit.ko $prev speaks ABI .*after a package upgrade, load the new module (rmmod kjit && modprobe kjit)" out/mismatch.txt
    fi
    chk reload_as_told sh -c 'rmmod kjit && modprobe kjit'
    new=$(modinfo -F version kjit 2>/dev/null)
    chk reloaded_is_new sh -c "[ -n '$new' ] && [ '$new' != '$prev' ] && grep -qx '$new' /sys/module/kjit/version"
    chk new_kjitctl_talks sh -c 'kjitctl stats > out/new-stats.txt 2>&1'
    chk unload_after_upgrade rmmod kjit
    ko=$(modinfo -n kjit 2>/dev/null)
    # DKMS compresses the module as the kernel's own are (6.12: .ko.xz).
    case "$ko" in
      "/lib/modules/$rel/updates/dkms/kjit.ko"|"/lib/modules/$rel/updates/dkms/kjit.ko".[gx]z|"/lib/modules/$rel/updates/dkms/kjit.ko.zst")
        pass dkms_module_path "$ko" ;;
      *) fail dkms_module_path "${ko:-modinfo found no kjit}" ;;
    esac
    signer=$(modinfo -F signer kjit 2>/dev/null)
    if [ -n "$signer" ]; then pass module_signed "signer: $signer"; else fail module_signed "no signer"; fi
    # kjit-kcov.service: installed, neither enabled nor started (checked
    # just below: no kjit.ko loaded); enabled here as a fuzzing machine
    # would, with an attach set from its options file (a glob, unquoted as
    # the file says): boot 2 checks it is up before anything else runs.
    chk kcov_unit_installed test -f /lib/systemd/system/kjit-kcov.service
    enabled=$(systemctl is-enabled kjit-kcov 2>&1)
    chk kcov_unit_not_enabled_by_install test "$enabled" = disabled
    sed -i 's/^KJIT_KCOV_OPTS=.*/KJIT_KCOV_OPTS="--attach vfs_fsync*"/' /etc/default/kjit-kcov
    chk kcov_unit_options grep -qx 'KJIT_KCOV_OPTS="--attach vfs_fsync\*"' /etc/default/kjit-kcov
    chk kcov_unit_enable sh -c 'systemctl enable kjit-kcov > out/kcov-enable.txt 2>&1'
    enabled=$(systemctl is-enabled kjit-kcov 2>&1)
    chk kcov_unit_enabled_after_enable test "$enabled" = enabled
    # What keeps multi-threaded TCG safe here (see the host script): kjit.ko
    # was loaded and attached nothing, and is gone again.
    chk install_leaves_nothing_loaded sh -c '! grep -q "^kjit " /proc/modules'
    # DKMS's share of the install: from `dkms add` (the source link) to the
    # signed module in place.
    added=$(stat -c %Y /var/lib/dkms/kjit/*/source 2>/dev/null | head -n1)
    echo "dkms_add_to_installed_module $(( $(stat -c %Y "$ko") - ${added:-0} ))s" >> times.txt
  fi
  echo "uptime_after_readme_install_block $(now)" >> times.txt
  # The root goes on to boot 2: everything DKMS wrote is on its disk.
  sync
  guest_done DEBIAN-PACKAGES-INSTALLED
  exit 0
  ;;
use) ;;
*) fail stage "unknown stage '$stage'"; guest_done DEBIAN-PACKAGES-DONE; exit 1 ;;
esac

# Boot 2: the module DKMS built in boot 1, in a new KASLR layout.
dkms status > out/dkms-status.txt 2>&1
chk dkms_installed_after_reboot grep -q "^kjit/.*, $rel, x86_64: installed" out/dkms-status.txt
# kjit-kcov.service, enabled in boot 1, ran in this boot alongside this
# script (both start after basic.target; a fuzzer's sshd starts after it):
# active, the device there, the attach set with the options file's glob,
# and a KCOV client gets read(-1)'s PCs (canonical: LINK_TEXT names them).
# Then stopped (kjitctl kcov disable), as the README's lines need nothing
# attached.
waited=0
while [ "$(systemctl is-active kjit-kcov)" = activating ] && [ "$waited" -lt 300 ]; do
  sleep 1; waited=$((waited + 1))
done
echo "kcov_unit_waited ${waited}s" >> times.txt
echo "uptime_kcov_unit_settled $(now)" >> times.txt
state=$(systemctl is-active kjit-kcov)
unit_us() { systemctl show -p "$1" --value kjit-kcov; }
unit_start=$(awk -v a="$(unit_us InactiveExitTimestampMonotonic)" -v b="$(unit_us ActiveEnterTimestampMonotonic)" \
  'BEGIN { printf "%.1fs, active at uptime %.1fs", (b - a) / 1e6, b / 1e6 }')
echo "kcov_unit_start $unit_start" >> times.txt
if [ "$state" = active ]; then
  pass kcov_unit_active_at_boot "$unit_start"
else
  fail kcov_unit_active_at_boot "$state: $(journalctl -b -u kjit-kcov --no-pager 2>&1 | tail -n 8 | tr '\n' ' ')"
fi
journalctl -b -u kjit-kcov --no-pager > out/kcov-unit-journal.txt 2>&1
chk kcov_device_at_boot test -e /sys/kernel/debug/kcov
for f in __x64_sys_openat handle_mm_fault 'vfs_fsync*'; do kjitctl list "$f"; done > out/kcov-attached.txt 2>&1
chk kcov_unit_attached_syscalls grep -qx '__x64_sys_openat attached' out/kcov-attached.txt
chk kcov_unit_attached_faults grep -qx 'handle_mm_fault attached' out/kcov-attached.txt
chk kcov_unit_attached_options sh -c 'grep -qx "vfs_fsync attached" out/kcov-attached.txt &&
                                      grep -qx "vfs_fsync_range attached" out/kcov-attached.txt'
LINK_TEXT=$(cat link-text.txt) ./kcov_client pc read > out/kcov-read.txt 2> out/kcov-read.err
n=$(grep -c '^0x' out/kcov-read.txt)
if [ "$n" -gt 0 ] && grep -q ' ksys_read+0x' out/kcov-read.txt; then
  pass kcov_client_at_boot "read(-1): $n PCs"
else
  fail kcov_client_at_boot "read(-1): $n PCs, none in ksys_read: $(head -c 300 out/kcov-read.err)"
fi
# `kjitctl list` (what is attached) exits 0 and names the unit's
# functions while it runs, and nothing once it stopped.
kjitctl list > out/kcov-before-stop.txt 2>&1
rc=$?
chk kcov_unit_listed_attached sh -c "[ $rc = 0 ] && grep -q '^0x[0-9a-f]* __x64_sys_openat\$' out/kcov-before-stop.txt &&
                                     grep -q '^0x[0-9a-f]* handle_mm_fault\$' out/kcov-before-stop.txt"
systemctl stop kjit-kcov > out/kcov-stop.txt 2>&1
state=$(systemctl is-active kjit-kcov)
chk kcov_unit_stopped test "$state" = inactive
kjitctl list > out/kcov-after-stop.txt 2>&1
rc=$?
chk kcov_unit_stop_detached sh -c "[ $rc = 0 ] && grep -q '^0 attached' out/kcov-after-stop.txt && ! grep -q '^0x' out/kcov-after-stop.txt"
echo "uptime_after_kcov_unit $(now)" >> times.txt

# What linux-image-$rel-dbg installs (the lab's copy of its vmlinux).
mkdir -p /usr/lib/debug/boot
ln -sf "$S/vmlinux-dbg" "/usr/lib/debug/boot/vmlinux-$rel"

if run_block readme-use.txt; then
  chk module_loaded grep -q '^kjit ' /proc/modules
  chk debug_found_without_vmlinux grep -q "kjit-report: debug info: /usr/lib/debug/boot/vmlinux-$rel" out/readme.log
  # The whole text report names blocks with file:line from the -dbg vmlinux.
  kjitctl report -i /tmp/ls.data > out/ls.txt 2>&1
  n=$(grep -Ec '[a-z_/]+\.[chS]:[0-9]+' out/ls.txt)
  if [ "$n" -gt 0 ]; then pass report_text_file_line "$n lines"; else fail report_text_file_line; fi
  chk report_lcov sh -c 'grep -q "^SF:" /tmp/ls.info && grep -Eq "^DA:[0-9]+,[1-9]" /tmp/ls.info'
  chk report_drcov sh -c 'head -c 200 /tmp/ls.drcov | grep -q "DRCOV VERSION"'
  cp /tmp/ls.data /tmp/ls.info /tmp/ls.drcov out/ 2>/dev/null
  # Kept for after the purge: the signed module and kjitctl.
  cp "$(modinfo -n kjit)" /tmp/kjit-signed.ko
  cp "$(command -v kjitctl)" /tmp/kjitctl
  # What lockdown refuses below works before it: the KCOV device, and
  # loading that signed module anew.
  if kjitctl kcov enable > out/kcov-enable-before-lockdown.log 2>&1 && [ -e /sys/kernel/debug/kcov ] &&
     kjitctl kcov disable >> out/kcov-enable-before-lockdown.log 2>&1; then
    pass kcov_enable_before_lockdown
  else
    fail kcov_enable_before_lockdown "$(tr '\n' ' ' < out/kcov-enable-before-lockdown.log)"
  fi
  if { rmmod kjit && insmod /tmp/kjit-signed.ko; } > out/insmod-before-lockdown.txt 2>&1; then
    pass insmod_before_lockdown
  else
    fail insmod_before_lockdown "$(tr '\n' ' ' < out/insmod-before-lockdown.txt)"
  fi
fi
echo "uptime_after_readme_use_block $(now)" >> times.txt

# Lockdown (integrity): the loaded module keeps working ...
# At error level, so the quiet console shows where lockdown began.
echo "<3>kjit-test: lockdown integrity from here on" > /dev/kmsg
if echo integrity > /sys/kernel/security/lockdown 2> out/lockdown.err &&
   grep -q '\[integrity\]' /sys/kernel/security/lockdown; then
  pass lockdown_on "$(cat /sys/kernel/security/lockdown)"
  if kjitctl record -o /tmp/lockdown.data -c 'ls /' > out/lockdown-record.log 2>&1; then
    pass lockdown_loaded_module_records
  else
    fail lockdown_loaded_module_records "$(tail -n 3 out/lockdown-record.log | tr '\n' ' ')"
  fi
  # ... and the KCOV device, in debugfs, is refused with the reason.
  if kjitctl kcov enable > out/lockdown-kcov.log 2>&1; then
    fail kcov_enable_lockdown_named "kjitctl kcov enable succeeded under lockdown"
  elif grep -q 'lockdown is on (integrity): debugfs refuses' out/lockdown-kcov.log; then
    pass kcov_enable_lockdown_named
  else
    fail kcov_enable_lockdown_named "$(tr '\n' ' ' < out/lockdown-kcov.log)"
  fi
else
  fail lockdown_on "$(cat out/lockdown.err)"
fi
echo "uptime_after_lockdown_record $(now)" >> times.txt

# Anything named after kjit, but the test's own (its runner, the share,
# /tmp, the debug vmlinux link).
kjit_files() {
  find / -xdev -name '*kjit*' -not -name 'kjit-guest-run*' -not -path "$S" -not -path "$S/*" \
    -not -path '/tmp/*' -not -path '/usr/lib/debug/*' > "$1" 2>/dev/null
}
# Each thing the purge must remove, there before it (the same commands).
chk before_purge_dkms_tree test -e /var/lib/dkms/kjit
chk before_purge_module sh -c 'ls /lib/modules/*/updates/dkms/kjit.ko* > /dev/null 2>&1'
chk before_purge_source sh -c 'ls -d /usr/src/kjit-* > /dev/null 2>&1'
chk before_purge_tools sh -c 'command -v kjitctl && command -v kjit-report'
npk=$(dpkg -l kjit kjit-dkms 2>/dev/null | grep -c '^ii ')
chk before_purge_packages [ "$npk" = 2 ]
kjit_files out/before-purge-files.txt
if [ -s out/before-purge-files.txt ]; then pass before_purge_files "$(wc -l < out/before-purge-files.txt) files"
else fail before_purge_files "find names no file of kjit's"; fi
if run_block readme-remove.txt; then
  chk purge_no_dkms_tree test ! -e /var/lib/dkms/kjit
  chk purge_no_module sh -c '! ls /lib/modules/*/updates/dkms/kjit.ko* 2>/dev/null'
  chk purge_no_source sh -c '! ls -d /usr/src/kjit-* 2>/dev/null'
  chk purge_no_tools sh -c '! command -v kjitctl && ! command -v kjit-report'
  chk purge_no_packages sh -c '! dpkg -l kjit kjit-dkms 2>/dev/null | grep -q "^[a-z][a-z] "'
  kjit_files out/leftovers.txt
  if [ -s out/leftovers.txt ]; then fail purge_nothing_left "$(head -n 5 out/leftovers.txt | tr '\n' ' ')"
  else pass purge_nothing_left; fi
fi
echo "uptime_after_readme_remove_block $(now)" >> times.txt

# ... and the same signed module, loaded anew, is refused: DKMS's key is
# not one the kernel trusts (no MOK enrolled in this guest); kjitctl says
# why and what to do.
if [ -f /tmp/kjit-signed.ko ]; then
  if insmod /tmp/kjit-signed.ko > out/lockdown-insmod.txt 2>&1; then
    fail lockdown_untrusted_key_refused "insmod succeeded"
    rmmod kjit
  else
    pass lockdown_untrusted_key_refused "$(tr '\n' ' ' < out/lockdown-insmod.txt)"
  fi
  /tmp/kjitctl stats > out/lockdown-kjitctl.txt 2>&1
  chk lockdown_message grep -q 'kernel lockdown is on (integrity).*mokutil --import /var/lib/dkms/mok.pub' \
    out/lockdown-kjitctl.txt
fi
dmesg | sed -n '/kjit-test: lockdown/,$p' > out/lockdown-dmesg.txt
guest_done DEBIAN-PACKAGES-DONE
