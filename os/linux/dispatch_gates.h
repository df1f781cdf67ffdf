/* SPDX-License-Identifier: GPL-2.0 */
/* dispatch_gates.S: where translated code leaves for the host (protocol in
 * include/kjit/engine.h); they call exit_gates.c's exit handlers
 * and sched_resume.c. */
#ifndef KJIT_DISPATCH_GATES_H
#define KJIT_DISPATCH_GATES_H

void kjit_gate_direct(void);
void kjit_gate_indirect(void);
/* sched_resume.c's: a translated call to __schedule jumps to the gate;
 * __schedule returns into the stub for a task that was retargeted. */
void kjit_gate_sched(void);
void kjit_sched_return(void);

#endif
