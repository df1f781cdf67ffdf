// SPDX-License-Identifier: GPL-2.0
/* The workload of `record` and `capture`: forked, and held on a pipe until
 * everything is armed, so that none of its work is missed. */
#include <stdio.h>
#include <unistd.h>
#include "kjitctl.h"

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
