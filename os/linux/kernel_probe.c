// SPDX-License-Identifier: GPL-2.0
/* What the running kernel does that kjit must match, read from the kernel
 * itself at load, never from its version: distribution kernels backport
 * mitigations and APIs.  One line in the log says what was found:
 *
 *   kjit: kernel: IBT built in, not enforced; fentry at +4 after ENDBR
 *         (__x64_sys_getpid); returns through srso_return_thunk
 *
 * - IBT: whether the kernel was built with it (functions start with
 *   endbr64, the fentry site follows it: fentry.c) and whether this CPU
 *   enforces it (kjit then calls unexported functions through its stubs,
 *   ksym_call.c, as it always does).
 * - The return thunk: at boot the kernel rewrites every return into a jump
 *   to the thunk the CPU's mitigations chose; the engine treats each of
 *   them as a return (shim.c, kjit_shim_return_thunks).
 * - Call-depth tracking (retbleed=stuff, Intel Skylake-class CPUs): the
 *   kernel then sends calls to the 16 bytes of padding before each
 *   function, which count the call depth, and returns through
 *   call_depth_return_thunk, which checks it.  Translated code would have
 *   to keep that count exactly as the original does; kjit refuses to load
 *   instead, with the reason. */
#define pr_fmt(fmt) "kjit: " fmt

#include <linux/kernel.h>
#include <asm/cpufeature.h>
#include "kernel_probe.h"
#include "fentry.h"
#include "shim.h"
#include "symbols.h"

int kjit_kernel_probe(void)
{
	unsigned long thunk = kjit_chosen_return_thunk();
	unsigned long depth = kjit_ksym("call_depth_return_thunk");
	unsigned long sys = kjit_ksym("__x64_sys_getpid");
	unsigned long site = kjit_fentry_site(sys);
	bool ibt_cpu = false;

#ifdef X86_FEATURE_IBT
	ibt_cpu = boot_cpu_has(X86_FEATURE_IBT);
#endif
	pr_info("kernel: IBT %s; fentry at +%ld%s (__x64_sys_getpid); returns through %ps\n",
		IS_ENABLED(CONFIG_X86_KERNEL_IBT) ?
			(ibt_cpu ? "built in, enforced" : "built in, not enforced") : "not built in",
		site ? (long)(site - sys) : -1L, site && site != sys ? " after ENDBR" : "",
		(void *)thunk);
	if (depth && thunk == depth) {
		pr_err("call-depth tracking is active (retbleed=stuff): calls go through the padding before each function and returns check a per-CPU depth that translated code does not keep; boot with retbleed=auto (or another retbleed= mode) to use kjit\n");
		return -EOPNOTSUPP;
	}
	return 0;
}
