// SPDX-License-Identifier: GPL-2.0
/* The progress line (progress.h).  KJIT_PROGRESS=1 in the environment
 * draws it on a stderr that is not a terminal, and from the start: tests
 * check the line without a pseudo-terminal. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "progress.h"

#define PROGRESS_DELAY_NS 1000000000ull   /* no line for work under a second */
#define PROGRESS_EVERY_NS 250000000ull    /* at most four redraws a second */

static int on;                  /* drawing allowed (a terminal) */
static unsigned long long t0, last;
static size_t drawn;            /* width of the line on screen, 0: none */
static const char *name = "";

static unsigned long long now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static int forced(void)
{
  const char *e = getenv("KJIT_PROGRESS");
  return e && !strcmp(e, "1");
}

void progress_begin(const char *what)
{
  name = what;
  on = isatty(STDERR_FILENO) || forced();
  t0 = now_ns();
  last = 0;
  drawn = 0;
}

int progress_due(void)
{
  if (!on) return 0;
  unsigned long long t = now_ns();
  if (!forced() && t - t0 < PROGRESS_DELAY_NS) return 0;
  return !last || t - last >= PROGRESS_EVERY_NS;
}

void progress_update(const char *fmt, ...)
{
  if (!progress_due()) return;
  char line[160];
  int k = snprintf(line, sizeof line, "%s: %.1f s", name, (double)(now_ns() - t0) / 1e9);
  if (k < 0) return;
  if ((size_t)k < sizeof line - 2 && fmt && *fmt) {
    va_list ap;
    va_start(ap, fmt);
    size_t used = (size_t)k;
    memcpy(line + used, ", ", 2);
    vsnprintf(line + used + 2, sizeof line - used - 2, fmt, ap);
    va_end(ap);
  }
  size_t len = strlen(line);
  /* pad over a longer previous line */
  fprintf(stderr, "\r%s%*s", line, drawn > len ? (int)(drawn - len) : 0, "");
  fflush(stderr);
  drawn = len > drawn ? len : drawn;
  last = now_ns();
}

void progress_end(void)
{
  if (drawn) {
    fprintf(stderr, "\r%*s\r", (int)drawn, "");
    fflush(stderr);
  }
  drawn = 0;
  on = 0;
}
