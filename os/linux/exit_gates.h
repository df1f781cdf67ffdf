/* SPDX-License-Identifier: GPL-2.0 */
/* exit_gates.c: the C side of dispatch_gates.S's gate_direct and
 * gate_indirect, where translated code leaves for the host.  Called only
 * from that assembly (with every register saved), so the two functions are
 * declared here for it and for the C compiler's prototype check. */
#ifndef KJIT_EXIT_GATES_H
#define KJIT_EXIT_GATES_H

#include <linux/types.h>

/* Protocol: include/kjit/engine.h (kjit_engine_direct_exit,
 * kjit_engine_indirect_miss).  Each returns where the task goes on: a
 * cache address or an original one. */
u64 kjit_linux_direct_exit(u64 stub_ret);
u64 kjit_linux_indirect_miss(u64 stub_ret, u64 target);

#endif
