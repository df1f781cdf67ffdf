// SPDX-License-Identifier: GPL-2.0
/* The progress line (progress.h).  One line on one terminal: the state is
 * behind a mutex because progress_phase's thread draws it too. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "progress.h"

#define PROGRESS_DELAY_NS 1000000000ull   /* no line for work under a second */
#define PROGRESS_EVERY_NS 250000000ull    /* at most four redraws a second */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int on;                  /* stderr is a terminal, the work runs */
static unsigned long long t0, last;
static int drawn;               /* a line is on the screen */
static const char *name = "";
static char state[128];
static pthread_t ticker;
static int ticking, stop_ticking;

static unsigned long long now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

void progress_begin(const char *what)
{
  pthread_mutex_lock(&lock);
  name = what;
  on = isatty(STDERR_FILENO);
  t0 = now_ns();
  last = 0;
  drawn = 0;
  state[0] = 0;
  pthread_mutex_unlock(&lock);
}

int progress_enabled(void) { return on; }

static int due_locked(unsigned long long t)
{
  return on && t - t0 >= PROGRESS_DELAY_NS && (!last || t - last >= PROGRESS_EVERY_NS);
}

int progress_due(void)
{
  pthread_mutex_lock(&lock);
  int due = due_locked(now_ns());
  pthread_mutex_unlock(&lock);
  return due;
}

/* Draws the line (the lock held), cleared to its end ("\033[K": a
 * terminal's), and leaves the cursor at its start: a message printed
 * meanwhile (a warning) writes over it instead of after it. */
static void draw_locked(unsigned long long t)
{
  fprintf(stderr, "\r%s: %.1f s%s%s\033[K\r", name, (double)(t - t0) / 1e9, state[0] ? ", " : "", state);
  fflush(stderr);
  drawn = 1;
  last = t;
}

static void erase_locked(void)
{
  if (!drawn) return;
  fprintf(stderr, "\r\033[K");
  fflush(stderr);
  drawn = 0;
}

void progress_clear(void)
{
  pthread_mutex_lock(&lock);
  erase_locked();
  last = now_ns();   /* the next line a quarter second later at the earliest */
  pthread_mutex_unlock(&lock);
}

static void set_state(const char *fmt, va_list ap)
{
  if (fmt) vsnprintf(state, sizeof state, fmt, ap);
  else state[0] = 0;
}

void progress_update(const char *fmt, ...)
{
  pthread_mutex_lock(&lock);
  unsigned long long t = now_ns();
  if (due_locked(t)) {
    va_list ap;
    va_start(ap, fmt);
    set_state(fmt, ap);
    va_end(ap);
    draw_locked(t);
  }
  pthread_mutex_unlock(&lock);
}

static void *tick(void *unused)
{
  (void)unused;
  for (;;) {
    usleep(50000);
    pthread_mutex_lock(&lock);
    if (stop_ticking) { pthread_mutex_unlock(&lock); return NULL; }
    unsigned long long t = now_ns();
    if (due_locked(t)) draw_locked(t);
    pthread_mutex_unlock(&lock);
  }
}

void progress_phase(const char *fmt, ...)
{
  pthread_mutex_lock(&lock);
  va_list ap;
  va_start(ap, fmt);
  set_state(fmt, ap);
  va_end(ap);
  if (on && !ticking) {
    stop_ticking = 0;
    ticking = pthread_create(&ticker, NULL, tick, NULL) == 0;
  }
  pthread_mutex_unlock(&lock);
}

void progress_end(void)
{
  pthread_mutex_lock(&lock);
  int joining = ticking;
  stop_ticking = 1;
  ticking = 0;
  pthread_mutex_unlock(&lock);
  if (joining) pthread_join(ticker, NULL);
  pthread_mutex_lock(&lock);
  erase_locked();
  on = 0;
  pthread_mutex_unlock(&lock);
}
