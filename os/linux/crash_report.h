/* SPDX-License-Identifier: GPL-2.0 */
/* crash_report.c: an oops in translated code names the original function
 * of the faulting instruction (as a "RIP:" line report parsers read), its
 * frames in the original code, and the cache addresses on the stack.
 * Beside textwatch: above the engine host, a user of the engine's API. */
#ifndef KJIT_CRASH_REPORT_H
#define KJIT_CRASH_REPORT_H

int kjit_crash_report_init(void);
void kjit_crash_report_exit(void);

#endif
