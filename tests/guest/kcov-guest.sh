#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/kcov.sh.
# Writes CHECK lines to checks.txt; ./kcov_client prints "0xPC symbol+0xoff".
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
step() { echo "<2>kjit-kcov: $*" > /dev/kmsg 2>/dev/null; echo "== $*"; }
funcs() { sed 's/.* \([^ +]*\)+0x.*/\1/' "$1" | sort -u; }

step "native cost of read(-1), before kjit"
./kcov_client bench 20000 > bench-native.txt

step insmod and kcov enable
insmod ./kjit.ko || { fail insmod; exit 1; }
note_modules
chk no_kcov_before [ ! -e /sys/kernel/debug/kcov ]
# The host compares this recording's canonical blocks across the two boots.
chk record_badfd $K record -t bbcount -e read -o badfd.data -- ./record_workload badfd 100
chk kcov_enable $K kcov enable
chk kcov_device [ -e /sys/kernel/debug/kcov ]

step the example: read, openat of an existing and of a missing file
# Another process makes system calls all along: it never enabled coverage,
# so none of its calls may appear in a trace.
( while :; do cat /etc/hostname > /dev/null; done ) & other=$!
./kcov_client pc read > read1.txt
./kcov_client pc read > read2.txt
./kcov_client pc read > read3.txt
./kcov_client pc open /etc/hostname > open-hit.txt
./kcov_client pc open /no/such/file > open-miss.txt
kill "$other"; wait "$other" 2>/dev/null
./kcov_client pc open /no/such/file > open-miss2.txt
./kcov_client pc open /no/such/file > open-miss3.txt
n=$(wc -l < read2.txt)
chk read_covered sh -c "[ $n -gt 0 ] && grep -q ' ksys_read+0x' read2.txt"
pass read_pcs "$n PCs: $(funcs read2.txt | tr '\n' ' ')"
chk read_repeatable cmp -s read2.txt read3.txt
chk read_only_its_calls sh -c "! grep -q ' do_sys_openat2+0x' read1.txt read2.txt read3.txt"
chk open_covered sh -c "grep -q ' do_sys_openat2+0x' open-hit.txt && grep -q ' getname' open-hit.txt && grep -q ' do_sys_openat2+0x' open-miss.txt"
pass open_pcs "existing $(wc -l < open-hit.txt), missing $(wc -l < open-miss.txt) PCs"
# For the host: the trace (canonical PCs, like the vmlinux's addresses) and
# this boot's KASLR offset.
cp open-hit.txt open-hit.pcs
awk -v link="$LINK_TEXT" '$3 == "_text" {print $1, link}' /proc/kallsyms > kaslr.txt
chk open_cases_differ sh -c "! cmp -s open-hit.txt open-miss.txt"
# Two openat traces of a missing file with no other task running: the
# host compares them (kcov.sh, open_repeatable), with the vmlinux's lines.
same=$(awk 'NR == FNR { a[$1] = 1; next } ($1 in a) && !seen[$1]++ { n++ } END { print n + 0 }' open-miss2.txt open-miss3.txt)
all=$(cat open-miss2.txt open-miss3.txt | awk '{ print $1 }' | sort -u | wc -l)
pass open_repeat_share "$same of $all distinct PCs in both runs"
chk others_filtered_at_entry sh -c "[ \$($K stats | awk '\$1 == \"filtered\" {print \$2}') -gt 0 ]"
# Trace-PC is inlined into every block (no call per block): one inlined
# call per block built (the comparison hooks are the outlined ones).
$K stats > stats-pc.txt
inl=$(awk '$1 == "inlined_calls" {print $2}' stats-pc.txt); built=$(awk '$1 == "blocks_built" {print $2}' stats-pc.txt)
if [ "${built:-0}" -gt 0 ] && [ "$inl" = "$built" ]; then pass trace_pc_inlined "$inl inlined calls in $built blocks"
else fail trace_pc_inlined "$inl inlined calls in $built blocks"; fi

step two threads, disable
./kcov_client threads > threads.txt
grep '^A ' threads.txt | cut -c3- > thread-a.txt
grep '^B ' threads.txt | cut -c3- > thread-b.txt
chk thread_a_read sh -c "grep -q ' ksys_read+0x' thread-a.txt && ! grep -q ' do_sys_openat2+0x' thread-a.txt"
chk thread_b_openat sh -c "grep -q ' do_sys_openat2+0x' thread-b.txt && ! grep -q ' ksys_read+0x' thread-b.txt"
./kcov_client disable > disable.txt
chk disable_stops sh -c "grep -q '^before [1-9]' disable.txt && grep -q '^after 0$' disable.txt"

step comparisons
./kcov_client cmp read5 > cmp.txt
# vfs_read: count > MAX_RW_COUNT (0x7ffff000) with count 5, 8 bytes:
# type KCOV_CMP_SIZE(3) (6), or 7 if flagged constant.
chk cmp_known_constant sh -c "grep -Eq '^[67] (0x5 0x7ffff000|0x7ffff000 0x5) 0x[0-9a-f]* vfs_read\+' cmp.txt"
chk cmp_const_records grep -Eq '^(1|3|5|7) ' cmp.txt
pass cmp_records "$(wc -l < cmp.txt) records"
# A count whose record index wraps 64 bits must not be written through.
./kcov_client cmp wrap > cmp-wrap.txt
chk cmp_count_from_user_bounded grep -q '^count 0x800000000000000$' cmp-wrap.txt

step a blocking read, a full buffer
./kcov_client pc pipe > pipe.txt
# The pipe is empty until the other thread writes: the copy runs after the
# wake-up, the wait before it.
chk blocking_covered_after_wakeup sh -c "grep -q ' prepare_to_wait_event+0x' pipe.txt && grep -q ' copy_page_to_iter+0x' pipe.txt"
./kcov_client pc fault > fault.txt
chk page_fault_covered grep -q ' __handle_mm_fault+0x' fault.txt
./kcov_client pc small /etc/hostname > small.txt
chk buffer_full_stops sh -c "grep -q '^count 511$' small.txt && [ \$(grep -c '^0x' small.txt) = 511 ]"
# A task's trace holds what ran in its context, as the real KCOV's
# in_task() test: no interrupt or softirq entry, whatever hit the task
# while it was traced.  The names exist in this kernel (so the pattern
# can match), and no PC of any trace above is in one of them.
IRQ_ENTRY='^(asm_sysvec_|asm_common_interrupt|sysvec_|__sysvec_|common_interrupt|__common_interrupt|irq_enter|irq_exit|__irq_exit_rcu|irqentry_|handle_irq_event|__handle_irq_event|handle_edge_irq|handle_fasteoi_irq|hrtimer_interrupt|__do_softirq|handle_softirqs)'
known=$(awk -v re="$IRQ_ENTRY" '$2 ~ /^[tT]$/ && $3 ~ re {n++} END {print n + 0}' /proc/kallsyms)
chk irq_entry_names_known sh -c "[ $known -ge 20 ] && grep -Eq ' (__)?sysvec_apic_timer_interrupt$' /proc/kallsyms"
awk -v re="$IRQ_ENTRY" '$1 ~ /^0x/ { f = $2; sub(/\+.*/, "", f); if (f ~ re) print FILENAME ": " $0 }' \
  read[123].txt open-*.txt thread-[ab].txt pipe.txt fault.txt small.txt > irq-pcs.txt
if [ -s irq-pcs.txt ]; then fail no_irq_entry_pcs "$(wc -l < irq-pcs.txt) PCs, e.g. $(head -n 3 irq-pcs.txt | tr '\n' ' ')"
else pass no_irq_entry_pcs "$known interrupt entry functions in kallsyms, none in $(cat read[123].txt open-*.txt thread-[ab].txt pipe.txt fault.txt small.txt | grep -c '^0x') PCs"; fi

step "cost: an unrelated thread (entry filter only), trace-pc, trace-cmp"
./kcov_client bench 20000 > bench-kcov.txt
native=$(awk '$2 == "plain" {print $3}' bench-native.txt)
plain=$(awk '$2 == "plain" {print $3}' bench-kcov.txt)
read -r pc pcs <<EOT
$(awk '$2 == "pc" {print $3, $4}' bench-kcov.txt)
EOT
read -r cmp cmps <<EOT
$(awk '$2 == "cmp" {print $3, $4}' bench-kcov.txt)
EOT
pass bench "read(-1) ns/call: native $native, kcov on but this thread not covered $plain, trace-pc $pc ($pcs PCs: $(( (pc - plain) / pcs )) ns per block), trace-cmp $cmp ($cmps records)"
chk bench_measured sh -c "[ -n '$native' ] && [ -n '$pc' ] && [ ${pcs:-0} -gt 0 ]"

step the real KCOV error codes
./kcov_client misuse > misuse.txt
chk misuse_codes grep -q '^misuse: 0 wrong$' misuse.txt
chk misuse_cases sh -c "[ \$(grep -c '^case ' misuse.txt) -ge 10 ]"
grep WRONG misuse.txt

step unload under a client
# This shell holds the file open as a client does: kjit.ko cannot go.
exec 3< /sys/kernel/debug/kcov
if rmmod kjit 2> rmmod-busy.err; then
  fail unload_refused_while_open; insmod ./kjit.ko; $K kcov enable > /dev/null
else
  pass unload_refused_while_open "$(cat rmmod-busy.err)"
fi
exec 3<&-
chk kcov_disable $K kcov disable
chk rmmod rmmod kjit
chk kcov_device_gone [ ! -e /sys/kernel/debug/kcov ]
chk insmod_again insmod ./kjit.ko
chk rmmod_again rmmod kjit
guest_done KCOV-GUEST-DONE
