#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share) for tests/guest/record.sh:
# `kjitctl record` against the real kernel.  Writes CHECK lines, and data
# files that the host reads back with `kjitctl report` (record.sh):
#   cov.data    bbcount on openat,read,close of `cat /etc/hostname` and a
#               shell read of it (lcov, drcov)
#   badfd.data  branches on read of ./record_workload badfd 100 (branches,
#               lcov branch coverage, annotate)
#   badfd-icount.data  icount on the same workload (annotate's sum)
#   fork.data   bbcount on newuname,getppid,... of `record_workload fork`,
#               while another process calls getppid (must not be counted)
#   cs.data     callstack on openat of `cat /etc/hostname` (graph, folded)
#   cs-calls.data, ct-calls.data  callstack, then calltrace, on
#               `record_workload calls 20` (graph's call tree against
#               calltrace's calls)
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
step() { echo "<2>kjit-record: $*" > /dev/kmsg 2>/dev/null; echo "== $*"; }
[ -f /etc/hostname ] || echo kjit-guest > /etc/hostname

step insmod
insmod ./kjit.ko || { fail insmod; exit 1; }
note_modules

step version and help
chk version sh -c "$K --version | grep -q '^kjitctl [0-9.]* (ABI [0-9]*)'"
chk record_help sh -c "$K record --help | grep -q '^usage: kjitctl record'"
chk list_help sh -c "$K list --help > /dev/null"

# Warm the dentry and page caches, so that the bbcount and icount runs of
# one workload follow the same paths.
for _ in 1 2 3; do cat /etc/hostname > /dev/null; ./record_workload badfd 10; done

step coverage record
# busybox cat copies with sendfile: the shell's read builtin read()s.
$K record -t bbcount -e openat,read,close -o cov.data -c 'cat /etc/hostname; read -r x < /etc/hostname' > cov.out 2> cov.err
rc=$?
chk record_cov_status [ "$rc" = 0 ]
chk record_cov_output grep -q "$(cat /etc/hostname)" cov.out
chk record_cov_file [ -s cov.data ]
cat cov.err

step branches and annotate workload
$K record -t branches -e read -o badfd.data -- ./record_workload badfd 100 2> badfd.err
chk record_badfd_status [ $? = 0 ]
chk record_badfd_nothing_dropped sh -c "! grep 'table full' badfd.err"
$K record -t icount -e read -o badfd-icount.data -- ./record_workload badfd 100 2> badfd-icount.err
chk record_badfd_icount_status [ $? = 0 ]

step exit status, forks, another process
./record_workload spin 60 & other=$!
sleep 1
$K record -e newuname,getppid,openat,read,close -o fork.data -- ./record_workload fork 50 2> fork.err
rc=$?
if [ "$rc" = 7 ]; then pass record_exit_status; else fail record_exit_status "rc $rc"; fi
$K record -t icount -e getppid -o exit3.data -c 'exit 3' 2> exit3.err
rc=$?
if [ "$rc" = 3 ]; then pass record_shell_exit_status; else fail record_shell_exit_status "rc $rc"; fi

# Waits up to 50 s for a background record to have attached FUNCTION
# (kjitctl list), counting the seconds in $waited.  The attach reads
# kallsyms and the attachable set first: seconds under TCG, more on a
# loaded host; the workloads spin for 60 s.  `kjitctl list` must exit 0:
# a list that failed names nothing, and would read as "not yet".
listed() {
  $K list > list-now.txt 2> list-now.err && grep -q "$1" list-now.txt
}
wait_attached() {
  waited=0
  until listed "$1" || [ "$waited" -ge 50 ]; do
    sleep 1
    waited=$((waited + 1))
  done
  listed "$1"
}

step kill kjitctl during a record
$K record -e getppid,openat -o kill.data -- ./record_workload spin 60 2> kill.err &
rec=$!
if wait_attached __x64_sys_getppid; then
  pass kill_attached_while_running "attached after ${waited} s"
else
  fail kill_attached_while_running "not attached after ${waited} s: $(tr "\n" " " < kill.err); kjitctl list: $(tr "\n" " " < list-now.err)"
fi
kill -9 "$rec"
wait "$rec" 2>/dev/null
sleep 1
$K list > list-after-kill.txt 2> list-after-kill.err
rc=$?
if [ "$rc" = 0 ] && [ ! -s list-after-kill.txt ] && grep -q '^0 attached' list-after-kill.err; then
  pass kill_leaves_nothing_attached
else
  fail kill_leaves_nothing_attached "kjitctl list exited $rc: $(cat list-after-kill.txt list-after-kill.err | tr '\n' ' ')"
fi
chk kill_pid_filter_off [ "$(stat_of pid)" = 0 ]
kill "$other" 2>/dev/null
killall record_workload 2>/dev/null
wait 2>/dev/null

step follow a running process, --duration, Ctrl-C
# Long enough to outlast the attach (kallsyms and the attachable set are
# read first, seconds under TCG).  It sleeps now and then: configuring
# quiesces the cache, and a task seen in translated code at every look
# holds that up.
./record_workload busy 10 & spinner=$!
$K record -t icount -e getppid -o follow.data -p "$spinner" 2> follow.err
rc=$?
chk record_follow_pid sh -c "[ $rc = 0 ] && [ -s follow.data ] && ! kill -0 $spinner 2>/dev/null"
wait "$spinner" 2>/dev/null
t0=$(date +%s)
$K record -t icount -e getppid -d 2 -o duration.data -- ./record_workload spin 60 2> duration.err
rc=$?
t1=$(date +%s)
# The workload is sent SIGTERM when the duration ends: 128 + 15.
chk record_duration sh -c "[ $rc = 143 ] && [ $((t1 - t0)) -lt 20 ] && grep -q 'stopped after --duration' duration.err && [ -s duration.data ]"
# Ctrl-C: the terminal sends SIGINT to the whole foreground group, kjitctl
# and its workload; setsid gives them a group of their own to signal.
# A background job of this non-interactive shell is no group leader, so
# setsid execs kjitctl in place: $! is the new group's id.
setsid $K record -t icount -e getppid -o ctrlc.data -- ./record_workload spin 60 2> ctrlc.err &
group=$!
wait_attached __x64_sys_getppid || fail record_ctrl_c_attached "not attached after ${waited} s; kjitctl list: $(tr "\n" " " < list-now.err)"
kill -INT -- "-$group"
wait 2>/dev/null
sleep 1
chk record_ctrl_c sh -c "grep -q 'stopped by a signal' ctrlc.err && [ -s ctrlc.data ] && $K list > list-ctrlc.txt && [ ! -s list-ctrlc.txt ]"

step version mismatch and notrace hint
./kjitctl-other-abi list > abi.out 2> abi.err
rc=$?
chk version_mismatch_named sh -c "[ $rc = 1 ] && grep -q 'version mismatch: kjitctl .* speaks ABI [0-9]*, kjit.ko .* speaks ABI [0-9]*' abi.err"
# do_syscall_64 is noinstr (arch/x86/entry/common.c): in kallsyms, never
# attachable.
chk notrace_in_kallsyms grep -q ' do_syscall_64$' /proc/kallsyms
$K record -e do_syscall_64 -c true 2> notrace.err
rc=$?
chk notrace_hint sh -c "[ $rc = 2 ] && grep -q 'ftrace cannot attach (notrace' notrace.err"

step call graph
$K record -t callstack -e openat -o cs.data -c 'cat /etc/hostname > /dev/null' 2> cs.err
chk record_callstack_status [ $? = 0 ]
# Two runs of a workload whose system calls make the same calls each time.
calls_targets=newuname,getppid,read,newfstat
./record_workload calls 5
$K record -t callstack -e $calls_targets -o cs-calls.data -- ./record_workload calls 20 2> cs-calls.err
chk record_callstack_calls_status [ $? = 0 ]
$K record -t calltrace -e $calls_targets -o ct-calls.data -- ./record_workload calls 20 2> ct-calls.err
chk record_calltrace_status [ $? = 0 ]

step bad input
$K record -e no_such_call_xyz -c true > bad1.out 2> bad1.err
rc=$?
chk bad_unknown_target sh -c "[ $rc = 2 ] && grep -q 'no such system call' bad1.err"
$K record -e opneat -c true 2> bad2.err
rc=$?
chk bad_did_you_mean sh -c "[ $rc = 2 ] && grep -q 'did you mean openat' bad2.err"
$K record -e 'zzz_nothing_*' -c true 2> bad3.err
rc=$?
chk bad_glob_matches_nothing sh -c "[ $rc = 2 ] && grep -q 'matches no' bad3.err"
$K list '*' > list-all.txt 2> list-all.err
rc=$?
if [ "$rc" = 0 ]; then pass list_all_status; else fail list_all_status "kjitctl list '*' exited $rc: $(tr '\n' ' ' < list-all.err)"; fi
refused=$(awk '$2 == "refused:" {print $1; exit}' list-all.txt)
if [ -n "$refused" ]; then pass list_marks_refused "$(cat list-all.err), first: $refused"; else fail list_marks_refused; fi
if [ -n "$refused" ]; then
  $K record -e "$refused" -c true 2> bad4.err
  rc=$?
  chk bad_refused_target sh -c "[ $rc = 1 ] && grep -q 'refused' bad4.err"
fi
$K record -c true -p 1 2> bad5.err
chk bad_two_workloads [ $? = 2 ]
$K record -t nosuchtool -c true 2> bad6.err
chk bad_tool [ $? = 2 ]
chk nothing_attached_after_bad_input sh -c "$K list > list-bad.txt && [ ! -s list-bad.txt ]"

step finish
chk rmmod rmmod kjit
guest_done RECORD-GUEST-DONE
