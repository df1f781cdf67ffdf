#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest (busybox sh, cwd = the share, 2 CPUs) for
# tests/guest/filters.sh: perf's habits in `kjitctl record` and the live
# view `kjitctl top`.  Each task calls one system call in a loop
# (filter_workload): wl_a getppid() pinned to CPU 0, wl_b uname() pinned to
# CPU 1, and a two-thread process whose second thread calls uname(); which
# of __x64_sys_getppid and __x64_sys_newuname a recording counted says which
# tasks it saw (bbcount's blocks, read live after the record).
set -u
# shellcheck source=tests/guest/guest-lib.sh
. ./guest-lib.sh
: > checks.txt
step() { echo "<2>kjit-filters: $*" > /dev/kmsg 2>/dev/null; echo "== $*"; }
T=getppid,newuname
# counted FILE FUNC: FILE (kjitctl blocks) has a block of FUNC with a count
counted() { awk -v f="$2" 'index($3, f "+") == 1 && $2 > 0 {n++} END {exit !n}' "$1"; }
# expect NAME RC FILE SEEN NOT_SEEN: the record exited 0, the live blocks
# hold SEEN's (unless -) and not NOT_SEEN's (unless -)
expect() {
  e_name=$1 e_rc=$2 e_file=$3 e_seen=$4 e_not=$5
  $K blocks > "$e_file" 2>&1
  e_why=""
  [ "$e_rc" = 0 ] || e_why="$e_why record exited $e_rc;"
  [ "$e_seen" = - ] || counted "$e_file" "__x64_sys_$e_seen" || e_why="$e_why no $e_seen;"
  [ "$e_not" = - ] || ! counted "$e_file" "__x64_sys_$e_not" || e_why="$e_why $e_not counted;"
  if [ -z "$e_why" ]; then pass "$e_name" "$(grep -c __x64_sys "$e_file") blocks"
  else fail "$e_name" "$e_why $(tr '\n' ' ' < "$e_file" | cut -c1-400)"; fi
}
# Every "nothing" below has its companion, the same command showing the
# thing where it should be there.  attached_none NAME FILE: `kjitctl list`
# exited 0 and lists nothing; attached_both NAME FILE: it exited 0 and
# lists the two functions of T.
attached_none() {
  $K list > "$2" 2> "$2.err"; a_rc=$?
  if [ "$a_rc" = 0 ] && [ ! -s "$2" ]; then pass "$1" "$(cat "$2.err")"
  else fail "$1" "kjitctl list exited $a_rc: $(cat "$2" "$2.err" | tr '\n' ' ' | cut -c1-300)"; fi
}
# both_listed FILE: a `kjitctl list` output names T's two functions
both_listed() { grep -Eq ' (__x64_sys|__do_sys)_getppid$' "$1" && grep -Eq ' (__x64_sys|__do_sys)_newuname$' "$1"; }
attached_both() {
  $K list > "$2" 2> "$2.err"; a_rc=$?
  if [ "$a_rc" = 0 ] && both_listed "$2"; then pass "$1" "$(cat "$2.err")"
  else fail "$1" "kjitctl list exited $a_rc: $(cat "$2" "$2.err" | tr '\n' ' ' | cut -c1-300)"; fi
}

step insmod
insmod ./kjit.ko || { fail insmod; exit 1; }
note_modules
chk two_cpus [ "$(grep -c ^processor /proc/cpuinfo)" -ge 2 ]

cp filter_workload wl_a
cp filter_workload wl_b
./wl_a getppid 600 0 & wl_a=$!
./wl_b uname 600 1 & wl_b=$!
./filter_workload threads 600 > threads.out & thr=$!
sleep 1
tid=$(awk '$1 == "tid" {print $2}' threads.out)
chk threads_tid [ -n "$tid" ]

step record -a
$K record -a -e $T -o all.data -- sleep 3 2> all.err
expect record_all $? all.txt getppid -
if counted all.txt __x64_sys_newuname; then pass record_all_two_processes; else fail record_all_two_processes "$(cat all.err)"; fi
chk record_all_meta grep -q 'every task' all.err

step record --tid
$K record -e $T --tid "$tid" -d 3 -o tid.data 2> tid.err
expect record_tid $? tid.txt newuname getppid
chk record_tid_said grep -q "thread $tid" tid.err
kill "$thr"; wait "$thr" 2>/dev/null

step record --comm
$K record -e $T --comm wl_b -d 3 -o comm.data 2> comm.err
expect record_comm $? comm.txt newuname getppid
# combined: wl_a runs on CPU 0 only, so wl_a on CPU 1 matches nothing,
# and wl_a on CPU 0 is seen
$K record -e $T --comm wl_a -C 1 -d 3 -o none.data 2> none.err
expect record_comm_and_cpu_combine $? none.txt - getppid
$K record -e $T --comm wl_a -C 0 -d 3 -o comm-cpu0.data 2> comm-cpu0.err
expect record_comm_and_cpu_match $? comm-cpu0.txt getppid newuname

step record --cpu
$K record -a -e $T -C 1 -d 3 -o cpu1.data 2> cpu1.err
expect record_cpu1 $? cpu1.txt newuname getppid
$K record -e $T --cpu 0 -d 3 -o cpu0.data 2> cpu0.err
expect record_cpu0 $? cpu0.txt getppid newuname

step record --cgroup
[ -f /sys/fs/cgroup/cgroup.procs ] || mount -t cgroup2 none /sys/fs/cgroup
chk cgroup2_mounted [ -f /sys/fs/cgroup/cgroup.procs ]
mkdir -p /sys/fs/cgroup/kjitf/inner
echo "$wl_a" > /sys/fs/cgroup/kjitf/inner/cgroup.procs
chk cgroup_moved grep -qx "$wl_a" /sys/fs/cgroup/kjitf/inner/cgroup.procs
# the subtree: wl_a is in kjitf/inner
$K record -e $T --cgroup kjitf -d 3 -o cg.data 2> cg.err
expect record_cgroup $? cg.txt getppid newuname
$K record -e $T --cgroup /nonexistent-kjit -d 1 2> cgbad.err
rc=$?
chk record_cgroup_missing sh -c "[ $rc = 1 ] && grep -q 'No such file' cgbad.err"
$K record -e $T --cgroup /sys/fs/cgroup/../../../proc -d 1 2> cgproc.err
rc=$?
chk record_cgroup_not_v2 sh -c "[ $rc = 1 ] && grep -q 'not a cgroup v2' cgproc.err"
# While a record of a command runs, the command itself sees the two
# functions attached and the filter on its own pid; after it, neither.
$K record -e $T -o during.data -- sh -c 'echo $$ > during-pid.txt; ./kjitctl stats > during-stats.txt
                                         ./kjitctl list > during-list.txt 2> during-list.err' 2> during.err
chk record_during_status [ $? = 0 ]
if both_listed during-list.txt; then
  pass attached_during_record "$(cat during-list.err)"
else fail attached_during_record "$(cat during-list.txt during-list.err | tr '\n' ' ')"; fi
during_pid=$(awk '$1 == "pid" {print $2}' during-stats.txt)
if [ -n "$during_pid" ] && [ "$during_pid" = "$(cat during-pid.txt)" ]; then pass filter_on_during_record "pid $during_pid"
else fail filter_on_during_record "stats pid ${during_pid:-?}, the command's $(cat during-pid.txt)"; fi
attached_none nothing_attached_after_records list-after-records.txt
chk filter_off_after_records [ "$(stat_of pid)" = 0 ]

step top
$K top -e $T -i 1 -n 3 > top.out 2> top.err
rc=$?
cat top.out
# three intervals, each with both functions, rates highest first
chk top_status [ "$rc" = 0 ]
chk top_intervals [ "$(grep -c '^kjitctl top: interval' top.out)" = 3 ]
# a function's own address prints as its bare name
in_top() { grep -qE " __x64_sys_$2(\+0x0)?\$" "$1"; }
if in_top top.out getppid && in_top top.out newuname; then pass top_both_functions; else fail top_both_functions; fi
# shellcheck disable=SC2016  # an awk program
chk top_sorted awk '/^kjitctl top: interval/ {prev = -1; next}
                    $1 ~ /^[0-9]+$/ {if (prev >= 0 && $1 > prev) bad = 1; prev = $1}
                    END {exit bad}' top.out
chk top_detached grep -q 'kjitctl top: detached' top.err
attached_none top_detached_list list-after-top.txt
$K top -e $T -i 1 -n 2 --comm wl_b > topc.out 2> topc.err
if in_top topc.out newuname && ! in_top topc.out getppid; then pass top_comm; else fail top_comm "$(head -12 topc.out | tr '\n' ' ')"; fi
# Ctrl-C: SIGINT to kjitctl (setsid: in a session of its own, as at a terminal)
setsid $K top -e $T -i 1 > topi.out 2> topi.err &
group=$!
i=0
while [ $i -lt 120 ] && ! grep -q '^kjitctl top: interval' topi.out; do sleep 1; i=$((i + 1)); done
sleep 1
attached_both top_attached_while_running list-during-top.txt
chk top_stats_attached_while_running [ "$(stat_of nattached)" = 2 ]
kill -INT "$group"
wait "$group"
rc=$?
chk top_ctrl_c sh -c "[ $rc = 0 ] && grep -q 'detached (signal)' topi.err && grep -q '^kjitctl top: interval' topi.out"
attached_none top_nothing_attached list-after-ctrl-c.txt
chk top_stats_nothing_attached [ "$(stat_of nattached)" = 0 ]

step finish
kill "$wl_a" "$wl_b" 2>/dev/null
wait 2>/dev/null
chk rmmod rmmod kjit
guest_done FILTERS-GUEST-DONE
