/* SPDX-License-Identifier: GPL-2.0 */
/* direct_yield.c: a BPF trampoline gets the functions kjit enters by a
 * direct call (bpf_trampoline_link_prog hooked by an IPMODIFY ops).  Above
 * entry_attach.c; module.c calls init after the entry layer's and exit
 * before it. */
#ifndef KJIT_DIRECT_YIELD_H
#define KJIT_DIRECT_YIELD_H

/* 0 also when the kernel has no hookable bpf_trampoline_link_prog (BPF is
 * then refused such functions, as without this file); -errno on a fault. */
int kjit_direct_yield_init(void);
void kjit_direct_yield_exit(void);

#endif
