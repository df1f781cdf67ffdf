/* dispatch_gates.S: where translated code leaves for the host (protocol in
 * include/kjit/engine.h); they call entry_ftrace.c's exit handlers. */
#ifndef KJIT_DISPATCH_GATES_H
#define KJIT_DISPATCH_GATES_H

void kjit_gate_direct(void);
void kjit_gate_indirect(void);

#endif
