/* SPDX-License-Identifier: GPL-2.0 */
/* A progress line on stderr for work that takes more than a second
 * (kjitctl record and capture waiting for their workload, kjit-report
 * reading debug info and writing a big recording): shown only when stderr
 * is a terminal, first after a second, redrawn in place ("\r") at most
 * four times a second, and erased when the work ends, so nothing of it
 * stays on the screen and nothing at all reaches a file or a pipe. */
#ifndef KJIT_PROGRESS_H
#define KJIT_PROGRESS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Starts timing the work; what: its name ("kjitctl record"). */
void progress_begin(const char *what);
/* Whether a line may be drawn at all (stderr is a terminal): callers that
 * would otherwise block poll instead. */
int progress_enabled(void);
/* Whether a redraw is due now: callers with costly state to gather (an
 * ioctl) ask first. */
int progress_due(void);
/* The current state, printf-style ("12345 entries"): drawn when due. */
void progress_update(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for work that blocks (reading DWARF): a thread redraws the
 * line with the elapsed time until the next phase or the end. */
void progress_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Erases the line before a message on stderr; it comes back when due. */
void progress_clear(void);
/* Erases the line, if one was drawn, and stops the thread. */
void progress_end(void);

#ifdef __cplusplus
}
#endif
#endif
