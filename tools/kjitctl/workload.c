// SPDX-License-Identifier: GPL-2.0
/* The workload of `record` and `capture`: forked, and held on a pipe until
 * everything is armed, so that none of its work is missed. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kjitctl.h"
#include "progress.h"

/* Forks CMD held on a pipe: it execs only once release_held(*go_w) is
 * called.  own_group: the workload gets its own process group (a timeout
 * kills all of it).  Returns the pid, or -1. */
pid_t spawn_held(char **cmdv, int *go_w, int own_group)
{
  int go[2];
  if (pipe(go)) { perror("pipe"); return -1; }
  pid_t child = fork();
  if (child < 0) { perror("fork"); return -1; }
  if (child == 0) {
    char c;
    close(go[1]);
    if (own_group) setpgid(0, 0);
    if (read(go[0], &c, 1) != 1) _exit(126);
    close(go[0]);
    execvp(cmdv[0], cmdv);
    perror("exec");
    _exit(127);
  }
  close(go[0]);
  *go_w = go[1];
  return child;
}

void release_held(int go_w)
{
  if (write(go_w, "g", 1) != 1) perror("write");
  close(go_w);
}

/* The progress line's state while kjitctl waits: how many entries kjit
 * has run so far (its statistics, read only when a redraw is due). */
void progress_entries(const char *doing)
{
  struct kjit_ioc_stats s;
  if (!progress_due()) return;
  if (get_stats(&s) == 0) progress_update("%s, kjit entered %llu times", doing, (unsigned long long)s.entered);
  else progress_update("%s", doing);
}

pid_t waitpid_progress(pid_t child, int *status)
{
  if (!progress_enabled()) return waitpid(child, status, 0);
  pid_t w = waitpid(child, status, WNOHANG);
  if (w) return w;
  progress_entries("the workload runs");
  usleep(50000);
  return 0;
}
