# SPDX-License-Identifier: GPL-2.0
"""The bench's benchmarks, configurations and modes, in the order RESULTS.md
shows them (bench/run.sh's ALL names the same configurations)."""

MICRO = ["null", "read", "write", "stat", "fstat", "openclose", "select",
         "siginstall", "sigdeliver", "pipe", "fork", "exec"]
CONFIGS = ["native", "kjit-none", "kjit-none-nofollow", "kjit-none-ipmodify", "kjit-none-notrace", "kjit-none-stackret", "kjit-syscount",
           "kjit-calltrace", "kjit-bbcount", "kjit-bb-notrace", "kjit-icount", "kjit-icount-dynpcpu", "kjit-bb-noliveness", "kjit-bb-noinline", "kjit-bb-noopt",
           "kjit-cache64", "kjit-cache256", "kjit-cache1024", "kjit-cache4096",
           "kjit-kcov-pc", "kjit-kcov-cmp", "kjit-kcov-beside", "kjit-bb-switching",
           "kprobe-sys", "kprobe-call", "kprobe-bb", "ftrace-func", "bpftrace"]
DESC = {
    "native": "native (both runs native: the noise floor)",
    "kjit-none": "kjit, no instrumentation",
    "kjit-none-nofollow": "kjit, no instrumentation, invocations not followed through the scheduler (follow_sleeps=0: they leave the cache at their call into it)",
    "kjit-none-ipmodify": "kjit, no instrumentation, entered through the IPMODIFY ftrace_ops instead of the direct-call trampoline (direct_entry=0)",
    "kjit-none-notrace": "kjit, no instrumentation, every block on its own (trace_blocks=1: a jump at each block end instead of the next block laid after it)",
    "kjit-none-stackret": "kjit, no instrumentation, every return through the general return site (abi_returns=0: a C function's ret does not compare with cmp)",
    "kjit-syscount": "kjit, per-syscall counting (entry_count)",
    "kjit-calltrace": "kjit, call tracing",
    "kjit-bbcount": "kjit, block counting",
    "kjit-bb-notrace": "kjit, block counting, every block on its own (trace_blocks=1)",
    "kjit-icount": "kjit, instruction counting",
    "kjit-icount-dynpcpu": "kjit, instruction counting, counter in a dynamic per-CPU window (percpu_kb=16: beyond disp32, through a register)",
    "kjit-bb-noliveness": "kjit, block counting, liveness off",
    "kjit-bb-noinline": "kjit, block counting, inlining off",
    "kjit-bb-noopt": "kjit, block counting, liveness+inlining off",
    "kjit-cache64": "kjit, block counting, 64 KiB code cache",
    "kjit-cache256": "kjit, block counting, 256 KiB code cache",
    "kjit-cache1024": "kjit, block counting, 1 MiB code cache",
    "kjit-cache4096": "kjit, block counting, 4 MiB code cache",
    "kjit-kcov-pc": "kjit's KCOV device (`kjitctl kcov enable`: every system call and handle_mm_fault), lmb covered with KCOV_TRACE_PC (`lmb -k pc`); macro: nginx and wrk uncovered",
    "kjit-kcov-cmp": "the same with KCOV_TRACE_CMP (`lmb -k cmp`)",
    "kjit-kcov-beside": "kjit's KCOV device with one other process covered (KCOV_TRACE_PC, blocked in pause()); lmb, nginx and wrk uncovered beside it",
    "kjit-bb-switching": "kjit, block counting, beside a busy tracer: a trace instance's function tracer on every function switched on and off once a second, in the native runs too",
    "kprobe-sys": "kprobes, one per syscall entry",
    "kprobe-call": "kprobes, one per called function",
    "kprobe-bb": "kprobes, one per basic block",
    "ftrace-func": "ftrace function tracer (call tracing)",
    "bpftrace": "bpftrace, counting syscalls",
}
MODES = {"tcg": "TCG wall clock", "icount": "-icount shift=0,sleep=off (guest instructions)"}
